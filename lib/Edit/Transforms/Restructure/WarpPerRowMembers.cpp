//===- WarpPerRowMembers.cpp - Struct accumulators, member by member ------===//
//
// Part of warp-per-row (WarpPerRow.cpp): row accumulators of a vector type
// or a small struct, combined across lanes member by member.
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "../../Patterns/ThreadPerItem.h"
#include "../TransformSupport.h"
#include "PlannedTransform.h"
#include "WarpPerRowInternal.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
