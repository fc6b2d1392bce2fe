//===- Proposer.cpp - Where candidate programs come from ------------------===//
//
// The template library is the only proposer today; an LLM proposer (the
// mixture of thoughts: K strategies, one program each) implements the same
// interface, and its candidates are verified like the templates'.
//
//===----------------------------------------------------------------------===//

#include "optiml/Synth/Synthesize.h"

using namespace llvm;

namespace optiml {
namespace synth {

Proposer::~Proposer() = default;

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
