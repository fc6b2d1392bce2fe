//===- Proposal.h - Edits proposed by a model -----------------------------===//
//
// A proposal is an edit in the edit vocabulary (docs/edits.md) plus the
// model's rationale. Parsing keeps each proposal's fate separate: one
// malformed proposal is rejected with its reason, the others survive.
//
//===----------------------------------------------------------------------===//

#ifndef OPTIML_LLM_PROPOSAL_H
#define OPTIML_LLM_PROPOSAL_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <string>
#include <vector>

namespace optiml {
namespace llm {

struct Proposal {
  /// A catalog transform ("tile-loop"), "replace-function" or
  /// "add-device-function".
  std::string Kind;
  /// A stable id from the kernel model: kernel, loop or launch site.
  std::string Target;
  /// The edit's parameters as a JSON object text ("{}" when none).
  std::string ParamsJSON = "{}";
  /// The new function text, for the kinds that carry code.
  std::string Code;
  std::string Rationale;

  /// The edit as the edit engine reads it:
  /// {"kind":..,"target":..,"params":{..}} plus "code" when present.
  std::string toEditJSON() const;
  /// One line for journals and prompts: "tile-loop @ k/loop0 {"tile":32}".
  std::string summary() const;
};

/// Whether a kind carries function text in Code.
bool kindCarriesCode(llvm::StringRef Kind);

/// Checks a proposal against the real edit schema; plugged in by the caller
/// (the edit library's validator once it exists).
using ProposalValidator = std::function<llvm::Error(const Proposal &)>;

struct RejectedProposal {
  /// Position in the model's reply, from 0.
  unsigned Index = 0;
  /// What could be read of it (may be partial).
  std::string Summary;
  std::string Reason;
};

struct ProposalBatch {
  std::vector<Proposal> Accepted;
  std::vector<RejectedProposal> Rejected;
};

/// The JSON Schema the model is asked to follow: {"proposals": [ {kind,
/// target, params, code, rationale}, ... ]}.
llvm::StringRef proposalReplySchema();
/// The looser schema the reply as a whole is checked against, so that each
/// proposal can be judged on its own.
llvm::StringRef proposalEnvelopeSchema();

/// Parses a reply document (already extracted JSON) into at most
/// MaxProposals proposals. Fails only when the document as a whole is
/// unusable (not JSON, no "proposals" array); each bad proposal becomes a
/// RejectedProposal. Checks, in order: the fields and their types, code
/// present exactly for the kinds that carry it, code that looks like one
/// function (balanced braces, no markdown fences left), duplicates, then
/// Validator.
llvm::Expected<ProposalBatch>
parseProposals(llvm::StringRef ReplyJSON, unsigned MaxProposals,
               const ProposalValidator &Validator = nullptr);

} // namespace llm
} // namespace optiml

#endif // OPTIML_LLM_PROPOSAL_H
