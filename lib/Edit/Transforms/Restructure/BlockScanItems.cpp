//===- BlockScanItems.cpp - block-scan with several elements a thread -----===//
//
// block-scan's `items` K (BlockScan.cpp recognizes the scan): a block of S
// threads that each store one value, scan and go on becomes a block of
// S / K threads that each do the work of K of them. The original thread
// t (a "virtual thread") is run by thread t % (S / K):
//
//   stage:  for k < K: vt = threadIdx.x + k * blockDim.x;
//                      <the code before the store>; <the store>
//           __syncthreads();
//   scan:   thread t reads the K consecutive elements of virtual threads
//           t * K .. t * K + K - 1 where the store put them, scans them in
//           registers, adds the total of the threads before it (shuffles
//           within the warp, one exchange of the warps' totals) and writes
//           each back where it was stored;
//           __syncthreads();
//   after:  for k < K: vt = threadIdx.x + k * blockDim.x; (in a lambda
//           where that code returns, so a return ends one element's run)
//                      <the code before the store>; <the code after the loop>
//
// with threadIdx.x written as vt and blockDim.x as (blockDim.x * K) in the
// code that moves, and every launch's block divided by K. The stage's K
// loads are independent (each writes shared memory), so a thread has K of
// them in flight where it had one: a one-element-a-thread scan is bound by
// the loads in flight (scan_block on the H200: 1.64 TB/s).
//
// Why it is exact: each virtual thread runs the statements the original
// thread ran, with the same threadIdx.x and blockDim.x, in the same order
// relative to the block's barriers; the code before the store is only
// declarations whose initializers have no side effects, so running it again
// before each part recomputes the same values. The scan leaves in each
// element what the original loop left: the sum of the elements of the
// virtual threads at or before it (BlockScan.cpp's reading of the loop; the
// rewrite stores the result where the store put the value, which is where
// the code after the loop reads it). Integer sums are exact; floating-point
// sums are added in another order, as with block-scan itself.
//
// Preconditions (beyond block-scan's): every launch's block is known, one
// dimensional and a multiple of 32 * K, and its text can be rewritten; the
// code before the store is declarations (`__shared__` arrays are declared
// once, before the rest); nothing before or after the scan synchronizes,
// shuffles or calls a helper whose result depends on the thread; after the
// loop nothing declares shared memory; threadIdx.x and blockDim.x are
// written out in the kernel (not by a macro).
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "../../Patterns/SideEffects.h"
#include "../TransformSupport.h"
#include "BlockScanInternal.h"
#include "optiml/Frontend/ASTUtil.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/Decl.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"

using namespace llvm;
using clang::dyn_cast;
using clang::dyn_cast_or_null;
using clang::isa;

namespace optiml {
namespace block_scan {

namespace {

bool isShared(const clang::VarDecl *V) {
  return V->hasAttr<clang::CUDASharedAttr>();
}

/// Every variable \p DS declares is `__shared__`.
bool allShared(const clang::DeclStmt *DS) {
  return all_of(DS->decls(), [](const clang::Decl *D) {
    const auto *V = dyn_cast<clang::VarDecl>(D);
    return V && isShared(V);
  });
}

/// A `__shared__` variable declared inside \p S, or null.
const clang::VarDecl *sharedDeclIn(const clang::Stmt *S) {
  if (!S)
    return nullptr;
  if (const auto *DS = dyn_cast<clang::DeclStmt>(S))
    for (const clang::Decl *D : DS->decls())
      if (const auto *V = dyn_cast<clang::VarDecl>(D); V && isShared(V))
        return V;
  for (const clang::Stmt *C : S->children())
    if (const clang::VarDecl *V = sharedDeclIn(C))
      return V;
  return nullptr;
}

/// Every threadIdx.x and blockDim.x in \p S (into \p Out); false when one
/// is written by a macro, or threadIdx or blockDim is used whole.
bool threadRefs(const clang::Stmt *S,
                std::vector<std::pair<const clang::Expr *, bool>> &Out) {
  if (!S)
    return true;
  if (const auto *E = dyn_cast<clang::Expr>(S)) {
    if (auto B = asBuiltinVar(E)) {
      bool Tid = B->Var == "threadIdx", Dim = B->Var == "blockDim";
      if ((Tid || Dim) && B->Dim == 'x') {
        if (E->getBeginLoc().isMacroID() || E->getEndLoc().isMacroID())
          return false;
        Out.push_back({E, Tid});
      }
      return true;
    }
    if (const auto *R = dyn_cast<clang::DeclRefExpr>(E)) {
      StringRef N = R->getDecl()->getName();
      if (N == "threadIdx" || N == "blockDim")
        return false;
    }
  }
  for (const clang::Stmt *C : S->children())
    if (!threadRefs(C, Out))
      return false;
  return true;
}

/// The declarations of the code before the store that \p Used needs,
/// followed through their initializers.
std::vector<const clang::DeclStmt *>
neededDecls(ArrayRef<const clang::Stmt *> Before,
            ArrayRef<const clang::Stmt *> Used) {
  std::vector<const clang::DeclStmt *> Keep;
  auto Needs = [&](const clang::VarDecl *V) {
    return any_of(Used, [&](const clang::Stmt *S) { return mentions(S, V); }) ||
           any_of(Keep, [&](const clang::DeclStmt *K) {
             return any_of(K->decls(), [&](const clang::Decl *D) {
               const auto *KV = dyn_cast<clang::VarDecl>(D);
               return KV && KV->getInit() && mentions(KV->getInit(), V);
             });
           });
  };
  for (const clang::Stmt *S : llvm::reverse(Before)) {
    const auto *DS = dyn_cast<clang::DeclStmt>(S);
    if (!DS || any_of(DS->decls(), [](const clang::Decl *D) {
          const auto *V = dyn_cast<clang::VarDecl>(D);
          return V && isShared(V);
        }))
      continue;
    if (any_of(DS->decls(), [&](const clang::Decl *D) {
          const auto *V = dyn_cast<clang::VarDecl>(D);
          return V && Needs(V);
        }))
      Keep.insert(Keep.begin(), DS);
  }
  return Keep;
}

} // namespace

std::string itemsProblem(const EditContext &Ctx, const ItemsInput &In,
                         int64_t Items) {
  const clang::SourceManager &SM = Ctx.AST.getSourceManager();
  std::vector<std::pair<const clang::Expr *, bool>> Refs;
  for (const clang::Stmt *S : In.Before) {
    const auto *DS = dyn_cast<clang::DeclStmt>(S);
    if (!DS)
      return "the statement at " + where(Ctx, S) +
             " before the scan's store is not a declaration; with " +
             std::to_string(Items) +
             " elements a thread, the code before the store runs once per "
             "element";
    for (const clang::Decl *D : DS->decls()) {
      const auto *V = dyn_cast<clang::VarDecl>(D);
      if (!V)
        return "the declaration at " + where(Ctx, S) + " declares no variable";
      if (isShared(V)) {
        if (allShared(DS))
          continue;
        return "the __shared__ array '" + V->getName().str() +
               "' shares its declaration with a local";
      }
      if (!V->hasLocalStorage())
        return "'" + V->getName().str() + "' at " + where(Ctx, S) +
               " is not a local of the thread";
      if (V->getInit() && mayHaveSideEffects(V->getInit(), Ctx.AST))
        return "the initializer of '" + V->getName().str() + "' at " +
               where(Ctx, S) + " has side effects";
    }
  }
  std::vector<const clang::Stmt *> Moved(In.Before.begin(), In.Before.end());
  Moved.push_back(In.Store);
  llvm::append_range(Moved, In.After);
  if (std::string Why = threadShapeCallProblem(Moved, SM); !Why.empty())
    return Why;
  if (mayHaveSideEffects(In.Store->getRHS(), Ctx.AST))
    return "the value the scan's store writes has side effects";
  for (const clang::Stmt *S : Moved)
    if (!threadRefs(S, Refs))
      return "the statement at " + where(Ctx, S) +
             " names threadIdx or blockDim whole or through a macro; it is "
             "rewritten for each element's thread";
  for (const clang::Stmt *S : In.After)
    if (const clang::Stmt *J = firstJump(S); J && !isa<clang::ReturnStmt>(J))
      return "the jump at " + where(Ctx, J) + " after the scan";
  for (const clang::Stmt *S : In.After)
    if (const clang::VarDecl *V = sharedDeclIn(S))
      return "the __shared__ array '" + V->getName().str() +
             "' is declared after the scan";
  for (const LaunchSite &L : In.Info->Launches) {
    auto X = blockExtentAt(Ctx, L, 0);
    auto Y = blockExtentAt(Ctx, L, 1), Z = blockExtentAt(Ctx, L, 2);
    if (!X || Y != 1 || Z != 1)
      return "launch " + L.Id + "'s block ('" + L.Block +
             "') is not known to be one-dimensional with a constant size";
    if (*X % (32 * Items))
      return "launch " + L.Id + " uses blocks of " + std::to_string(*X) +
             " threads; " + std::to_string(Items) +
             " elements a thread need a multiple of " +
             std::to_string(32 * Items);
    if (!L.BlockInPlace)
      return macroBlockProblem(L);
    const auto *Call = findLaunchCall(Ctx, L);
    if (!Call || mayHaveSideEffects(Call->getConfig()->getArg(1), Ctx.AST))
      return "the block of " + L.Id + " has side effects";
  }
  return "";
}

// Why long: one text in three parts (the stage, the scan, the code after
// it), each built from the same renamed statements.
Expected<clang::tooling::Replacements> itemsRewrite(const EditContext &Ctx,
                                                    const Edit &E,
                                                    const ItemsInput &In,
                                                    int64_t Items) {
  StringRef Code = Ctx.Code;
  std::string K = std::to_string(Items);
  std::string KernelText =
      Code.slice(In.Info->Range.Begin.Offset, In.Info->Range.End.Offset).str();
  auto Fresh = [&](StringRef Base) {
    std::string N = freshName(KernelText, Base);
    KernelText += " " + N;
    return N;
  };
  std::string Vt = Fresh("vt"), Kv = Fresh("k"), J = Fresh("j"),
              V = Fresh("scan_v"), Lane = Fresh("scan_lane"),
              Warp = Fresh("scan_warp"), D = Fresh("scan_d"),
              Y = Fresh("scan_y"), S = Fresh("scan_s"), X = Fresh("scan_x"),
              Top = Fresh("scan_t"), Sums = Fresh("scan_warp_sums");
  // A statement's text with each threadIdx.x written as Vt and blockDim.x
  // as the original block.
  // A statement's span; a declaration may start with a macro
  // (`__shared__ int buf[N];`).
  auto Span = [&](const clang::Stmt *St,
                  bool Whole) -> std::optional<SourceSpan> {
    auto Sp = Whole ? looseStmtSpan(Ctx, St) : looseExprSpan(Ctx, St);
    const clang::SourceManager &SM = Ctx.AST.getSourceManager();
    if (!Sp && isa<clang::DeclStmt>(St) && !St->getEndLoc().isMacroID())
      if (auto FS =
              fileSpan(SM, Ctx.AST.getLangOpts(),
                       clang::SourceRange(SM.getExpansionLoc(St->getBeginLoc()),
                                          St->getEndLoc()),
                       Ctx.file()))
        Sp = withSemicolon(Ctx, *FS);
    return Sp;
  };
  // A statement's text with each threadIdx.x written as Vt and blockDim.x
  // as the original block.
  auto Text = [&](const clang::Stmt *St,
                  bool Whole = true) -> std::optional<std::string> {
    auto Sp = Span(St, Whole);
    std::vector<std::pair<const clang::Expr *, bool>> Refs;
    if (!Sp || !threadRefs(St, Refs))
      return std::nullopt;
    std::vector<TextEdit> Edits;
    for (const auto &[R, Tid] : Refs) {
      auto RS = looseExprSpan(Ctx, R);
      if (!RS)
        return std::nullopt;
      Edits.push_back({RS->Begin.Offset, RS->End.Offset - RS->Begin.Offset,
                       Tid ? Vt : "(blockDim.x * " + K + ")"});
    }
    // Lines after the first keep their place relative to the first.
    return reindent(spliceText(Code, Sp->Begin.Offset, Sp->End.Offset, Edits),
                    -int(indentationAt(Code, Sp->Begin.Offset).size()));
  };
  auto Lines = [&](ArrayRef<const clang::Stmt *> Ss,
                   StringRef Indent) -> std::optional<std::string> {
    std::string Out;
    for (const clang::Stmt *St : Ss) {
      auto T = Text(St);
      if (!T)
        return std::nullopt;
      Out += indentLines(Indent.str() + *T, Indent) + "\n";
    }
    return Out;
  };
  // The declarations one part needs, then the part.
  auto Part = [&](ArrayRef<const clang::Stmt *> Body, StringRef Indent) {
    std::vector<const clang::Stmt *> All;
    for (const clang::DeclStmt *DS : neededDecls(In.Before, Body))
      All.push_back(DS);
    llvm::append_range(All, Body);
    return Lines(All, Indent);
  };
  auto Fail = [&] {
    return reject(E, "macro",
                  "a statement of kernel '" + E.Target +
                      "' has no place in the file");
  };
  std::string Shared;
  for (const clang::Stmt *St : In.Before)
    if (const auto *DS = dyn_cast<clang::DeclStmt>(St); DS && allShared(DS)) {
      auto T = Lines({St}, "");
      if (!T)
        return Fail();
      Shared += *T;
    }
  std::string T = In.ElemType;
  auto Loop = [&](StringRef Var, StringRef Index, StringRef Body) {
    return "#pragma unroll\nfor (int " + Var.str() + " = 0; " + Var.str() +
           " < " + K + "; ++" + Var.str() + ") {\n  const unsigned " + Vt +
           " = " + Index.str() + ";\n" + Body.str() + "}\n";
  };
  auto Stage = Part({In.Store}, "  ");
  // A `return` after the scan ends one original thread: in a lambda it
  // ends that element's run, not the others'.
  bool Returns = any_of(
      In.After, [](const clang::Stmt *St) { return firstJump(St) != nullptr; });
  auto After = Part(In.After, Returns ? "    " : "  ");
  if (After && Returns)
    *After = "  [&]() {\n" + *After + "  }();\n";
  // The element each virtual thread stored: read, then written back.
  auto Slot = [&](bool Read) -> std::optional<std::string> {
    auto Where = Text(In.Store->getLHS(), /*Whole=*/false);
    if (!Where)
      return std::nullopt;
    std::vector<const clang::Stmt *> Used = {In.Store->getLHS()};
    std::string Decls;
    for (const clang::DeclStmt *DS : neededDecls(In.Before, Used)) {
      auto L = Lines({DS}, "  ");
      if (!L)
        return std::nullopt;
      Decls += *L;
    }
    return Decls + "  " +
           (Read ? V + "[" + J + "] = " + *Where
                 : *Where + " = " + V + "[" + J + "]") +
           ";\n";
  };
  auto ReadSlot = Slot(true), WriteSlot = Slot(false);
  if (!Stage || !After || !ReadSlot || !WriteSlot)
    return Fail();
  std::string Own = "threadIdx.x * " + K + " + " + J;
  std::string Strided = "threadIdx.x + " + Kv + " * blockDim.x";
  auto Shuffle = [&](const std::string &Var, const std::string &In) {
    return In + "for (unsigned " + D + " = 1; " + D + " < 32; " + D +
           " <<= 1) {\n" + In + "  " + T + " " + Y +
           " = __shfl_up_sync(0xffffffffu, " + Var + ", " + D + ");\n" + In +
           "  if (" + Lane + " >= " + D + ")\n" + In + "    " + Var +
           " += " + Y + ";\n" + In + "}\n";
  };
  std::string Out = Shared + "// block-scan items=" + K +
                    ": each thread scans " + K +
                    " consecutive elements; the code before and after the "
                    "scan runs once for each element's thread.\n";
  Out += Loop(Kv, Strided, *Stage);
  Out += "__syncthreads();\n{\n";
  Out += "  " + T + " " + V + "[" + K + "];\n";
  Out += indentLines("  " + Loop(J, Own, *ReadSlot), "  ");
  Out += "  #pragma unroll\n  for (int " + J + " = 1; " + J + " < " + K +
         "; ++" + J + ")\n    " + V + "[" + J + "] += " + V + "[" + J +
         " - 1];\n";
  Out += "  const unsigned " + Lane + " = threadIdx.x % 32, " + Warp +
         " = threadIdx.x / 32;\n";
  Out +=
      "  " + T + " " + S + " = " + V + "[" + std::to_string(Items - 1) + "];\n";
  Out += Shuffle(S, "  ");
  Out += "  " + T + " " + X + " = __shfl_up_sync(0xffffffffu, " + S +
         ", 1);\n  if (" + Lane + " == 0)\n    " + X + " = static_cast<" + T +
         ">(0);\n";
  Out += "  __shared__ " + T + " " + Sums + "[32];\n";
  Out += "  if (" + Lane + " == 31)\n    " + Sums + "[" + Warp + "] = " + S +
         ";\n  __syncthreads();\n";
  Out += "  if (" + Warp + " == 0) {\n    " + T + " " + Top + " = " + Lane +
         " < blockDim.x / 32 ? " + Sums + "[" + Lane + "] : static_cast<" + T +
         ">(0);\n";
  Out += Shuffle(Top, "    ");
  Out += "    " + Sums + "[" + Lane + "] = " + Top + ";\n  }\n";
  Out += "  __syncthreads();\n";
  Out += "  if (" + Warp + " > 0)\n    " + X + " += " + Sums + "[" + Warp +
         " - 1];\n";
  Out += "  #pragma unroll\n  for (int " + J + " = 0; " + J + " < " + K +
         "; ++" + J + ")\n    " + V + "[" + J + "] += " + X + ";\n";
  Out += indentLines("  " + Loop(J, Own, *WriteSlot), "  ");
  Out += "}\n__syncthreads();\n";
  Out += Loop(Kv, Strided, *After);

  // The whole body but its braces.
  const auto *Body = cast<clang::CompoundStmt>(In.Kernel->getBody());
  auto First = Span(Body->body_front(), true),
       Last = Span(Body->body_back(), true);
  if (!First || !Last)
    return Fail();
  std::string Indent = indentationAt(Code, First->Begin.Offset);
  while (!Out.empty() && Out.back() == '\n')
    Out.pop_back();
  clang::tooling::Replacements R;
  if (Error Err = addReplacement(
          R,
          replaceSpan(Ctx, offsetSpan(First->Begin.Offset, Last->End.Offset),
                      indentLines(Out, Indent)),
          E))
    return std::move(Err);
  for (const LaunchSite &L : In.Info->Launches) {
    const auto *Call = findLaunchCall(Ctx, L);
    const clang::Expr *B = Call->getConfig()->getArg(1)->IgnoreImplicit();
    bool Integer = false;
    if (const auto *C = dyn_cast<clang::CXXConstructExpr>(B);
        C && C->getNumArgs() >= 1 &&
        C->getArg(0)->IgnoreImplicit()->getType()->isIntegerType() &&
        !C->getConstructor()->isCopyOrMoveConstructor() &&
        (C->getNumArgs() == 1 || isa<clang::CXXDefaultArgExpr>(C->getArg(1))))
      Integer = true;
    std::string Blk = parenthesize(L.Block);
    std::string NewBlock = Integer ? Blk + " / " + K
                                   : "dim3(" + Blk + ".x / " + K + ", " + Blk +
                                         ".y, " + Blk + ".z)";
    if (Error Err =
            addReplacement(R, replaceSpan(Ctx, L.BlockRange, NewBlock), E))
      return std::move(Err);
  }
  return R;
}

} // namespace block_scan
} // namespace optiml
