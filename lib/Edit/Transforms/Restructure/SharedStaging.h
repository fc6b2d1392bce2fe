//===- SharedStaging.h - Staging global data in shared tiles -----*- C++
//-*-===//
//
// Private to lib/Edit/Transforms. The tiling edits (all-pairs-tiling,
// transpose-through-shared, and the matmul/stencil shared-tiling) all stage
// global data in a shared-memory tile the same way: declare the tile (with
// padding against bank conflicts), let the threads of a block copy a tile
// cooperatively, synchronize, compute from the tile, synchronize before the
// next tile overwrites it, and size grids in whole tiles. The text of those
// pieces is generated here once so the edits read alike.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_LIB_EDIT_TRANSFORMS_SHAREDSTAGING_H
#define OPTIML_LIB_EDIT_TRANSFORMS_SHAREDSTAGING_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include <cstdint>
#include <string>

namespace optiml {

/// `__shared__ T Name[D0][D1 + Pad];` (the padding goes on the last
/// dimension, written as one number).
std::string sharedTileDecl(llvm::StringRef ElemType, llvm::StringRef Name,
                           llvm::ArrayRef<int64_t> Dims, int64_t Pad = 0);

/// `(N + D - 1) / D` with the sum folded when \p N is a literal.
std::string ceilDivText(llvm::StringRef N, int64_t D);

/// The cooperative copy of a 1D tile: the threads of a block take the
/// elements \p Var = threadIdx.x, + blockDim.x, ... below \p Count and run
/// \p Body (one statement, mentioning \p Var) for each. Lines after the
/// first are indented by \p Indent.
std::string cooperativeLoop(llvm::StringRef Var, llvm::StringRef Count,
                            llvm::StringRef Body, llvm::StringRef Indent);

/// A tiled walk over [Begin, End) in steps of \p Tile: the loop header
/// `for (Type Base = Begin; Base < End; Base += Tile)`.
std::string tileLoopHead(llvm::StringRef Base, llvm::StringRef Begin,
                         llvm::StringRef End, int64_t Tile,
                         llvm::StringRef Type = "int");

/// One thread's element of a tile, zero-filled outside the data:
/// `Slot = Cond ? Load : Zero;` (a thread whose element lies outside still
/// stores, so every slot the compute phase reads is written).
std::string guardedTileLoad(llvm::StringRef Slot, llvm::StringRef Cond,
                            llvm::StringRef Load, llvm::StringRef Zero);

/// A 2D tile with a halo, staged by a whole block: the BX x BY threads
/// walk the Rows x Cols slots row-major; slot (Ty, Tx) holds the global
/// element (Gy, Gx) = (blockIdx.y * BY - HaloY + Ty, blockIdx.x * BX -
/// HaloX + Tx) and is filled with \p Load when \p Cond holds (both may use
/// the four names). Slots whose condition is false are never read.
struct HaloTile {
  std::string ElemType, Tile;       ///< element type, tile name
  std::string Slot, Ty, Tx, Gy, Gx; ///< loop variable and coordinates
  int64_t BX = 0, BY = 0, HaloY = 0, HaloX = 0, Rows = 0, Cols = 0;
  std::string Cond, Load;
};
/// The declaration, the cooperative copy and the barrier after it; lines
/// after the first are indented by \p Indent.
std::string haloTileLoad(const HaloTile &T, llvm::StringRef Indent);

} // namespace optiml

#endif
