//===- Policy.h - Who proposes edits, and who applies them ------*- C++ -*-===//
//
// A policy proposes actions (edits with a prior) for a program state; the
// search decides which to try. The catalog policy (CatalogPolicy.h) and the
// LLM policy share this interface. An EditApplier turns an edit into checked
// new source (the Edit library's rewriter, or a script in tests).
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_SEARCH_POLICY_H
#define OPTIML_SEARCH_POLICY_H

#include "optiml/Edit/Edit.h"
#include "optiml/Search/CandidateEvaluator.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"
#include <string>
#include <vector>

namespace optiml {

struct Action {
  Edit E;
  /// The policy's belief that this edit helps, in (0, 1]; normalized over a
  /// node's actions by the search (the PUCT prior).
  double Prior = 1;
  std::string Rationale; ///< "accesses to 'a' are strided: stage in shared"
  std::string Origin;    ///< "catalog", "llm"
};

/// What a policy tried at this node and what came of it (the LLM reads it).
struct TriedAction {
  Edit E;
  std::string Result; ///< "rejected: ...", "failed verification: ...", "1.31x"
};

struct PolicyContext {
  llvm::StringRef FileName;
  llvm::StringRef Source;              ///< the program state being expanded
  llvm::ArrayRef<Edit> Path;           ///< edits from the original to here
  llvm::ArrayRef<std::string> Kernels; ///< targets; empty: every kernel
  const EvalOutcome *Last = nullptr;   ///< this state's evaluation (profile)
  const EvalOutcome *Original = nullptr;
  llvm::ArrayRef<TriedAction> Tried;
};

class Policy {
public:
  virtual ~Policy();
  virtual llvm::StringRef name() const = 0;
  /// Actions for one program state, any order (the search sorts by prior).
  virtual llvm::Expected<std::vector<Action>>
  propose(const PolicyContext &Ctx) = 0;
  /// Whether asking again (with Ctx.Tried filled) may yield new actions: an
  /// unbounded action space (the LLM) is widened by asking again.
  virtual bool canProposeMore() const { return false; }
};

/// The result of applying one edit to one program.
struct ApplyOutcome {
  bool Applied = false;
  std::string NewCode;
  std::string Diff; ///< against the program the edit was applied to
  std::string Summary;
  bool ChangesPrecision = false;
  std::vector<std::string> ExtraNvccFlags;
  /// Why not (failed checks, as data), or Error for anything else.
  std::vector<CheckFailure> Failures;
  std::string Error;
  std::string reason() const;
};

class EditApplier {
public:
  virtual ~EditApplier();
  virtual ApplyOutcome apply(llvm::StringRef Code, const Edit &E) = 0;
  /// A unified diff between two versions of the file.
  virtual std::string diff(llvm::StringRef Old, llvm::StringRef New) = 0;
  /// apply() may run on several threads at once: the search then applies
  /// the edits it prefetches in the background, while a candidate runs on
  /// the GPU.
  virtual bool concurrent() const { return false; }
};

/// Tries \p Policies in turn and merges their actions; each policy's priors
/// are scaled by its weight.
class MixedPolicy : public Policy {
public:
  void add(Policy &P, double Weight) { Parts.push_back({&P, Weight}); }
  llvm::StringRef name() const override { return "mixed"; }
  llvm::Expected<std::vector<Action>>
  propose(const PolicyContext &Ctx) override;
  bool canProposeMore() const override;

private:
  std::vector<std::pair<Policy *, double>> Parts;
};

/// Compact, canonical text of an edit (kind, target, sorted params): used
/// to recognize the same action twice.
std::string editKey(const Edit &E);

} // namespace optiml

#endif
