//===- SharedStaging.cpp - Staging global data in shared tiles ------------===//

#include "SharedStaging.h"
#include "RestructureSupport.h"
#include "llvm/ADT/StringExtras.h"

using namespace llvm;

namespace optiml {
namespace restructure {

std::string sharedTileDecl(StringRef ElemType, StringRef Name,
                           ArrayRef<int64_t> Dims, int64_t Pad) {
  std::string S = "__shared__ " + ElemType.str() + " " + Name.str();
  for (size_t I = 0; I < Dims.size(); ++I)
    S += "[" + std::to_string(Dims[I] + (I + 1 == Dims.size() ? Pad : 0)) +
         "]";
  return S + ";";
}

std::string ceilDivText(StringRef N, int64_t D) {
  if (D == 1)
    return N.str();
  int64_t V;
  if (!N.getAsInteger(10, V))
    return std::to_string((V + D - 1) / D);
  return "(" + paren(N) + " + " + std::to_string(D - 1) + ") / " +
         std::to_string(D);
}

std::string cooperativeLoop(StringRef Var, StringRef Count, StringRef Body,
                            StringRef Indent) {
  return ("for (int " + Var + " = threadIdx.x; " + Var + " < " + Count +
          "; " + Var + " += blockDim.x)\n" + Indent + "  " + Body)
      .str();
}

std::string tileLoopHead(StringRef Base, StringRef Begin, StringRef End,
                         int64_t Tile, StringRef Type) {
  return ("for (" + Type + " " + Base + " = " + Begin + "; " + Base + " < " +
          End + "; " + Base + " += " + Twine(Tile) + ")")
      .str();
}

std::string guardedTileLoad(StringRef Slot, StringRef Cond, StringRef Load,
                            StringRef Zero) {
  return (Slot + " = " + Cond + " ? " + Load + " : " + Zero + ";").str();
}

} // namespace restructure
} // namespace optiml
