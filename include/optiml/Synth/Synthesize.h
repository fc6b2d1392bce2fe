//===- Synthesize.h - Candidate programs and their verification -*- C++ -*-===//
//
// Synthesis is proposal under verification, like the search: proposers
// write whole candidate programs for a spec, each is built with nvcc and
// run at the spec's sizes with several seeds and at edge sizes (1, and
// sizes that are not multiples of any block size), and only a program
// whose every run passes its own check against the reference is kept.
//
// Proposers: the template library (Templates.h), and with an LLM the
// mixture of thoughts (Thoughts.h), which asks for K strategies and one
// program per strategy; verification treats every candidate alike, and a
// model's candidate that fails is given the reason and one more try.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_SYNTH_SYNTHESIZE_H
#define OPTIML_SYNTH_SYNTHESIZE_H

#include "optiml/Eval/Runner.h"
#include "optiml/Synth/Spec.h"
#include "optiml/Synth/Templates.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace optiml {
class Builder;

namespace synth {

/// One candidate program for a spec.
struct Candidate {
  /// Who wrote it and how: "template gemm: one thread per output element".
  std::string Strategy;
  /// "template" or "llm".
  std::string Origin = "template";
  /// The thought behind a model's program: its strategy in the model's
  /// words.
  std::string Thought;
  /// The whole .cu program (empty when Problem says why there is none).
  std::string Source;
  /// A model's part of the program (its kernels and launch statements):
  /// set for every candidate whose GPU code is not ours, which then passes
  /// checkWrittenCode before nvcc sees it.
  std::optional<KernelCode> Written;
  /// Why the proposer has no program for this thought (a broken reply).
  std::string Problem;
  /// This candidate is a repair of an earlier one, after feedback.
  bool Repaired = false;
};

/// Where candidate programs come from.
class Proposer {
public:
  virtual ~Proposer();
  /// "templates", "llm"...
  virtual llvm::StringRef name() const = 0;
  /// Candidates for \p S (checkClass has passed), each a whole program
  /// named by \p Opts. Errors: the proposer could not run at all (an
  /// unreachable model); a proposer with no idea returns no candidate.
  virtual llvm::Expected<std::vector<Candidate>>
  propose(const Spec &S, const ProgramOptions &Opts) = 0;
  /// A second try at \p Failed, told why it failed (\p Feedback: the
  /// checks', the compiler's or the verifier's words). None when the
  /// proposer cannot repair (the templates).
  virtual llvm::Expected<std::optional<Candidate>>
  repair(const Spec &S, const ProgramOptions &Opts, const Candidate &Failed,
         llvm::StringRef Feedback);
};

/// The template library as a proposer: one candidate, the class's template.
std::unique_ptr<Proposer> createTemplateProposer();

/// One run of a candidate: sizes and a seed, passed as `name=value`
/// arguments.
struct VerifyCase {
  /// "spec sizes, seed 2", "edge: every size 1".
  std::string Label;
  std::vector<std::pair<std::string, int64_t>> Sizes;
  unsigned Seed = 1;
  /// The program's arguments: rows=333 cols=7 seed=2.
  std::vector<std::string> args() const;
};

/// The runs every candidate must pass: the spec's sizes with \p Seeds seeds
/// (the spec's seed and the next ones), then edge sizes: every size 1;
/// every size odd and at most 333 (not a multiple of any block size); and,
/// with two or more dimensions, the first 1 and the others odd.
std::vector<VerifyCase> verificationCases(const Spec &S, unsigned Seeds = 3);

struct VerifyRun {
  VerifyCase Case;
  bool Passed = false;
  /// The program's verdict line ("optiml-synth: PASS gemm m=333 ..."), or
  /// how it ended when it printed none.
  std::string Verdict;
  /// Its last lines of output (the mismatches it reported, a CUDA error).
  std::string Output;
  double Seconds = 0;
};

struct Verification {
  bool Built = false;
  /// nvcc's first error lines when it did not build.
  std::string BuildErrors;
  std::string Binary;
  std::vector<VerifyRun> Runs;
  /// Built, and every run passed.
  bool passed() const;
};

/// Why a built program failed its verification, in words a model (and a
/// user) can act on: the failing run, and what the pattern of passing and
/// failing runs suggests. A program right at the spec's first seed and
/// wrong at another does not compute from its inputs (hard-coded answers);
/// one right at the spec's sizes and wrong at an edge size does not handle
/// other sizes.
std::string explainFailure(const Verification &V);

struct VerifyOptions {
  RunnerOptions Runner;
  std::optional<unsigned> Device;
  unsigned Seeds = 3;
  /// Each run's result as it finishes (may be null).
  llvm::raw_ostream *Log = nullptr;
};

/// Builds \p Source (the program written to \p Path) with \p B and runs it
/// for every case of verificationCases(). Stops at the first failing run.
/// Errors only when the builder or the runner cannot work at all.
llvm::Expected<Verification> verifyProgram(Builder &B, llvm::StringRef Path,
                                           llvm::StringRef Source,
                                           const Spec &S,
                                           const VerifyOptions &Opts);

} // namespace synth
} // namespace optiml

#endif
