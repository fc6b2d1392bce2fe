//===- Proposer.cpp - Where candidate programs come from ------------------===//
//
// The template library as a proposer; the model's mixture of thoughts is in
// Thoughts.cpp.
//
//===----------------------------------------------------------------------===//

#include "TemplatesInternal.h"
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
    std::vector<Candidate> Out(1);
    // "template gemm: inputs A [m, k], ..."
    Out[0].Strategy = "template " + describeClass(S.Class);
    Out[0].Source = generateProgram(S, Opts);
    // The expert versions, where there are some: they compete on time.
    for (auto &[Name, Code] : expertCodes(S)) {
      Candidate C;
      C.Strategy = "template " + className(S.Class).str() + " (" + Name + ")";
      C.Thought = Name;
      C.Source = generateProgram(S, Opts, Code);
      Out.push_back(std::move(C));
    }
    return Out;
  }
};
} // namespace

std::unique_ptr<Proposer> createTemplateProposer() {
  return std::make_unique<TemplateProposer>();
}

} // namespace synth
} // namespace optiml
