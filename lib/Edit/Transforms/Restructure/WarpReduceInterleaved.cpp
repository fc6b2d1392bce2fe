//===- WarpReduceInterleaved.cpp - Interleaved shared-memory trees --------===//
//
// Part of warp-reduce's tree matcher (WarpReduceTree.cpp): trees whose
// stride doubles (interleaved addressing).
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "../TransformSupport.h"
#include "WarpReduceInternal.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
