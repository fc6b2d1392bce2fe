//===- Proposer.cpp - Where candidate programs come from ------------------===//
//
// The template library as a proposer; the model's mixture of thoughts is in
// Thoughts.cpp.
//
//===----------------------------------------------------------------------===//

#include "optiml/Synth/Synthesize.h"

using namespace llvm;

namespace optiml {
namespace synth {

Proposer::~Proposer() = default;

Expected<std::optional<Candidate>> Proposer::repair(const Spec &,
                                                    const ProgramOptions &,
                                                    const Candidate &,
                                                    StringRef) {
  return std::nullopt;
}

namespace {
class TemplateProposer : public Proposer {
public:
  StringRef name() const override { return "templates"; }
  Expected<std::vector<Candidate>>
  propose(const Spec &S, const ProgramOptions &Opts) override {
    Candidate C;
    // "template gemm: inputs A [m, k], ..."
    C.Strategy = "template " + describeClass(S.Class);
    C.Source = generateProgram(S, Opts);
    return std::vector<Candidate>{std::move(C)};
  }
};
} // namespace

std::unique_ptr<Proposer> createTemplateProposer() {
  return std::make_unique<TemplateProposer>();
}

} // namespace synth
} // namespace optiml
