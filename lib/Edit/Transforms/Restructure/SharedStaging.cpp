//===- SharedStaging.cpp - Staging global data in shared tiles ------------===//

#include "SharedStaging.h"
#include "../TransformSupport.h"
#include "llvm/ADT/StringExtras.h"

using namespace llvm;

namespace optiml {

std::string sharedTileDecl(StringRef ElemType, StringRef Name,
                           ArrayRef<int64_t> Dims, int64_t Pad) {
  std::string S = "__shared__ " + ElemType.str() + " " + Name.str();
  for (size_t I = 0; I < Dims.size(); ++I)
    S += "[" + std::to_string(Dims[I] + (I + 1 == Dims.size() ? Pad : 0)) + "]";
  return S + ";";
}

std::string ceilDivText(StringRef N, int64_t D) {
  if (D == 1)
    return N.str();
  int64_t V;
  if (!N.getAsInteger(10, V))
    return std::to_string((V + D - 1) / D);
  return "(" + parenthesize(N) + " + " + std::to_string(D - 1) + ") / " +
         std::to_string(D);
}

std::string cooperativeLoop(StringRef Var, StringRef Count, StringRef Body,
                            StringRef Indent) {
  return ("for (int " + Var + " = threadIdx.x; " + Var + " < " + Count + "; " +
          Var + " += blockDim.x)\n" + Indent + "  " + Body)
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

std::string haloTileLoad(const HaloTile &T, StringRef Indent) {
  std::string I = Indent.str();
  auto Origin = [](StringRef Dim, int64_t B, int64_t Halo) {
    std::string S =
        "(int)(blockIdx." + Dim.str() + " * " + std::to_string(B) + ")";
    if (Halo)
      S += " - " + std::to_string(Halo);
    return S;
  };
  std::string Out;
  Out += sharedTileDecl(T.ElemType, T.Tile, {T.Rows, T.Cols}) + "\n";
  Out += I + "for (int " + T.Slot + " = threadIdx.y * " + std::to_string(T.BX) +
         " + threadIdx.x; " + T.Slot + " < " + std::to_string(T.Rows * T.Cols) +
         "; " + T.Slot + " += " + std::to_string(T.BX * T.BY) + ") {\n";
  Out += I + "  int " + T.Ty + " = " + T.Slot + " / " + std::to_string(T.Cols) +
         ", " + T.Tx + " = " + T.Slot + " % " + std::to_string(T.Cols) + ";\n";
  Out += I + "  int " + T.Gy + " = " + Origin("y", T.BY, T.HaloY) + " + " +
         T.Ty + ", " + T.Gx + " = " + Origin("x", T.BX, T.HaloX) + " + " +
         T.Tx + ";\n";
  Out += I + "  if (" + T.Cond + ")\n";
  Out +=
      I + "    " + T.Tile + "[" + T.Ty + "][" + T.Tx + "] = " + T.Load + ";\n";
  Out += I + "}\n";
  Out += I + "__syncthreads();";
  return Out;
}

} // namespace optiml
