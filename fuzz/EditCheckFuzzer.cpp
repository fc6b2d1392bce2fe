//===- EditCheckFuzzer.cpp - libFuzzer target for the edit-text checks ----===//
//
// Feeds arbitrary bytes as edit text through the checks that read it, in
// process:
//   - scanFunctionText, the screen of replace-function / add-device-function
//     text (directives, braces, literals through the compiler's lexer);
//   - the text as the new body of a kernel in a small fixed file:
//     checkEditDirectives, checkLexicalInvariance, checkIntroducedTokens;
//   - with OPTIML_FUZZ_PP=1 in the environment, also the preprocessed
//     invariance (clang's preprocessor over the old and the new file, host
//     side) whenever the lexical layers accept the text. A whole `apply`
//     (four parses) is too slow to fuzz.
// The language options are the compiler's: taken from a parse of the fixed
// file at start-up.
//
// Properties: nothing crashes, aborts or trips ASan/UBSan; text the screen
// accepts holds no directive when lexed alone.
//
//===----------------------------------------------------------------------===//

#include "FunctionText.h"
#include "optiml/Edit/Checks.h"
#include "optiml/Frontend/Parse.h"
#include "clang/AST/ASTContext.h"
#include "clang/Frontend/ASTUnit.h"
#include "llvm/Support/Error.h"
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>

using namespace optiml;

static const char *Prefix = "#define SCALE 2\n"
                            "#define DROP(...)\n"
                            "__attribute__((global)) void k(float *p, int n) {";
static const char *Suffix = "}\n"
                            "#if SCALE > 1\n"
                            "int after(int v) { return v; }\n"
                            "#endif\n"
                            "DROP(x) int last = 1; /* end */\n";

namespace {
struct State {
  ParseConfig Config;
  std::unique_ptr<ParsedTU> TU;
  std::string Old;
  bool PP = false;
};
} // namespace

static State &state() {
  static State S = [] {
    State S;
    ToolchainOptions O;
    O.ResourceDir = OPTIML_FUZZ_RESOURCE_DIR;
    if (auto T = discoverToolchain(O)) {
      S.Config.Tools = *T;
    } else {
      llvm::consumeError(T.takeError());
      S.Config.Tools.CudaPath = "/usr/local/cuda";
      S.Config.Tools.GpuArch = "sm_90";
      S.Config.Tools.ResourceDir = OPTIML_FUZZ_RESOURCE_DIR;
    }
    S.Config.ExtraArgs = {"-nocudainc", "-nocudalib"};
    S.Old = std::string(Prefix) + "\n  p[0] = SCALE;\n" + Suffix;
    auto P =
        parseCuda(S.Old, "/tmp/edit-check-fuzz.cu", S.Config, CudaSide::Host);
    if (!P || P->errorCount()) {
      fprintf(stderr, "edit-check-fuzzer: the fixed file does not parse\n");
      if (P)
        for (const Diagnostic &D : P->Diags)
          fprintf(stderr, "%s\n", D.str().c_str());
      abort();
    }
    S.TU = std::make_unique<ParsedTU>(std::move(*P));
    const char *Env = getenv("OPTIML_FUZZ_PP");
    S.PP = Env && *Env == '1';
    return S;
  }();
  return S;
}

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  state();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  State &S = state();
  const clang::LangOptions &LO = S.TU->AST->getASTContext().getLangOpts();
  llvm::StringRef Text(reinterpret_cast<const char *>(Data), Size);

  // 1. The function-text screen.
  Edit E{"replace-function", "k", {{"code", Text.str()}}};
  auto Scanned = scanFunctionText(E, Text, LO);
  if (Scanned) {
    if (!checkEditDirectives(LO, Text, {ByteRange{0, unsigned(Size), ""}})
             .empty()) {
      fprintf(stderr, "accepted text holds a directive\n");
      abort();
    }
  } else {
    llvm::consumeError(Scanned.takeError());
  }

  // 2. The text as the body of k.
  size_t B = strlen(Prefix), L = S.Old.size() - B - strlen(Suffix);
  clang::tooling::Replacements Repls;
  if (llvm::Error Err = Repls.add(
          clang::tooling::Replacement("/tmp/edit-check-fuzz.cu", B, L, Text))) {
    llvm::consumeError(std::move(Err));
    return 0;
  }
  auto New = clang::tooling::applyAllReplacements(S.Old, Repls);
  if (!New) {
    llvm::consumeError(New.takeError());
    return 0;
  }
  std::vector<ByteRange> Edited = editedRanges(Repls);
  auto D = checkEditDirectives(LO, *New, Edited);
  auto Lex = checkLexicalInvariance(LO, S.Old, *New, Repls);
  CheckOptions Opts;
  (void)checkIntroducedTokens(LO, S.Old, *New, Repls, Opts);
  if (D.empty() && Lex.empty() && S.PP)
    (void)checkPreprocessedInvariance("/tmp/edit-check-fuzz.cu", S.Old, *New,
                                      Repls, S.Config, CudaSide::Host);
  return 0;
}
