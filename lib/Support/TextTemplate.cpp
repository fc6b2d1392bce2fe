//===- TextTemplate.cpp - ${Name} templates for generated code ------------===//

#include "optiml/Support/TextTemplate.h"
#include "llvm/ADT/STLExtras.h"
#include <cassert>

using namespace llvm;

namespace optiml {

std::string fillTemplate(StringRef Template,
                         ArrayRef<std::pair<StringRef, std::string>> Values) {
  std::string Out;
  Out.reserve(Template.size());
  while (!Template.empty()) {
    size_t At = Template.find("${");
    Out += Template.take_front(At);
    if (At == StringRef::npos)
      break;
    Template = Template.drop_front(At + 2);
    size_t End = Template.find('}');
    assert(End != StringRef::npos && "unterminated placeholder");
    StringRef Name = Template.take_front(End);
    const auto *It =
        find_if(Values, [&](const auto &P) { return P.first == Name; });
    assert(It != Values.end() && "a placeholder without a value");
    if (It != Values.end())
      Out += It->second;
    Template = Template.drop_front(End + 1);
  }
  return Out;
}

} // namespace optiml
