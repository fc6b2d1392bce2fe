//===- LLMReplyFuzzer.cpp - libFuzzer target for model replies ------------===//
//
// Feeds arbitrary bytes to everything that reads what an LLM server sends:
// the OpenAI and Anthropic wire formats, server error bodies, cache
// entries, the JSON extraction from prose, the schema check, the proposal
// parser, and the redactor. Properties: never crashes or aborts; a redacted
// text or document never holds the registered key; a redacted JSON
// document is still JSON.
//
//===----------------------------------------------------------------------===//

#include "../lib/LLM/WireFormatInternal.h"
#include "optiml/LLM/Proposal.h"
#include "optiml/LLM/Secrets.h"
#include "optiml/LLM/StructuredOutput.h"
#include "optiml/Support/Secrets.h"
#include "llvm/Support/Error.h"
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

using namespace optiml;
using namespace optiml::llm;

static const char *const Key = "fz-canary-key-0123456789abcdef";

static void checkNoKey(llvm::StringRef Text, const char *Where) {
  if (Text.contains(Key)) {
    fprintf(stderr, "key survived redaction (%s): %.*s\n", Where,
            static_cast<int>(std::min<size_t>(Text.size(), 400)), Text.data());
    abort();
  }
}

static void proposals(llvm::StringRef Doc, const Redactor &R) {
  llvm::consumeError(validateJSONSchema(Doc, proposalEnvelopeSchema()));
  llvm::consumeError(validateJSONSchema(Doc, proposalReplySchema()));
  std::string Clean = redactReplyJSON(Doc, R);
  checkNoKey(Clean, "redactReplyJSON");
  if (!nlohmann::json::accept(Clean)) {
    // Doc came out of extractJSON, so it parsed; its redaction must too.
    fprintf(stderr, "redacted document is not JSON: %s\n", Clean.c_str());
    abort();
  }
  auto Batch = parseProposals(Doc, 8, [](const Proposal &P) -> llvm::Error {
    if (P.Kind.empty())
      return llvm::createStringError("empty kind");
    return llvm::Error::success();
  });
  if (!Batch) {
    llvm::consumeError(Batch.takeError());
    return;
  }
  for (const Proposal &P : Batch->Accepted) {
    (void)P.summary();
    (void)P.toEditJSON();
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  llvm::StringRef In(reinterpret_cast<const char *>(Data), Size);
  Redactor R;
  R.addSecret(Key);

  // The key placed where the input says, to check it is always masked.
  size_t At = Size ? Data[0] % (Size + 1) : 0;
  std::string WithKey = (In.take_front(At) + Key + In.drop_front(At)).str();
  checkNoKey(R.redact(WithKey), "redact");
  (void)redactKeyShapes(In);

  for (Provider P : {Provider::OpenAI, Provider::Anthropic}) {
    auto Reply = parseReply(P, In);
    if (!Reply) {
      llvm::consumeError(Reply.takeError());
      continue;
    }
    checkNoKey(R.redact(Reply->Text), "reply text");
    if (auto Doc = extractJSON(Reply->Text))
      proposals(*Doc, R);
    else
      llvm::consumeError(Doc.takeError());
    if (Reply->ToolInput) {
      llvm::consumeError(diagnoseBadJSON(*Reply->ToolInput, "arguments"));
      if (auto Doc = extractJSON(*Reply->ToolInput))
        proposals(*Doc, R);
      else
        llvm::consumeError(Doc.takeError());
    }
  }
  checkNoKey(R.redact(serverErrorMessage(WithKey)), "server error");
  if (auto Doc = extractJSON(In))
    proposals(*Doc, R);
  else
    llvm::consumeError(Doc.takeError());
  if (auto Cached = deserializeResponse(In)) {
    (void)serializeResponse(*Cached);
  } else {
    llvm::consumeError(Cached.takeError());
  }
  return 0;
}
