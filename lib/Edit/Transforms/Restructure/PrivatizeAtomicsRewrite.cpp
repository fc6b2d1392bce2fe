//===- PrivatizeAtomicsRewrite.cpp - privatize-atomics: the rewrite -------===//
//
// The text a privatize-atomics plan becomes: the private copies in shared
// memory, the updates redirected to them, the merge into the global array,
// the grid-stride loop (with wide loads) and the launches' capped grids.
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "../../Patterns/ThreadPerItem.h"
#include "../TransformSupport.h"
#include "PlannedTransform.h"
#include "PrivatizeAtomicsInternal.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/Stmt.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/STLExtras.h"
#include <functional>
#include <map>

using namespace llvm;
using clang::dyn_cast;
using clang::dyn_cast_or_null;
using clang::isa;

namespace optiml {
namespace privatizeatomics {

/// "const size_t i" -> "size_t i": the index declared const becomes the
/// loop variable of a grid-stride loop, which steps it.
static std::string loopVariable(StringRef Decl, const clang::VarDecl *V) {
  if (!V->getType().isConstQualified())
    return Decl.str();
  SmallVector<StringRef, 4> Words;
  Decl.split(Words, ' ', -1, /*KeepEmpty=*/false);
  llvm::erase(Words, "const");
  return join(Words, " ");
}

// Why long: the replacement kernel text is emitted in the order it reads
// (declarations, the private copies, the loop, the merge), each part
// depending on the plan's choices (copies, vector width, bin count).
Expected<clang::tooling::Replacements>
PrivatizeAtomics::rewrite(const EditContext &Ctx, const Edit &E,
                          const Plan &P) const {
  const auto *Body = cast<clang::CompoundStmt>(P.Kernel.Decl->getBody());
  auto BodySp = looseExprSpan(Ctx, Body);
  if (!BodySp)
    return reject(E, "macro", "the kernel body is written inside a macro");
  unsigned Begin = BodySp->Begin.Offset + 1, End = BodySp->End.Offset - 1;
  const std::string &AName = P.ArrayText;
  std::string Priv = freshName(
      Ctx.Code,
      (P.Field ? P.Field->getName() : P.Array->getName()).str() + "_private");
  std::string B = freshName(Ctx.Code, "bin");
  std::string W = freshName(Ctx.Code, "w");
  int64_t Warps = P.BlockSize / 32;
  std::string Bins = std::to_string(P.Bins);

  // [From, To) with the edits inside it applied.
  auto Render = [&](unsigned From, unsigned To,
                    const std::vector<TextEdit> &Inner) {
    std::vector<TextEdit> In;
    for (const TextEdit &T : Inner)
      if (T.Offset >= From && T.Offset + T.Length <= To)
        In.push_back(T);
    return spliceText(Ctx.Code, From, To, In);
  };
  auto Outside = [](const TextEdit &T, const std::vector<TextEdit> &Spans) {
    return llvm::none_of(Spans, [&](const TextEdit &S) {
      return T.Offset >= S.Offset && T.Offset + T.Length <= S.Offset + S.Length;
    });
  };
  // The body's edits: atomics go to the private copy, and \p Loads (the
  // input loads, replaced by word elements) are applied inside them too.
  auto BodyEdits = [&](const std::vector<TextEdit> &Loads)
      -> Expected<std::vector<TextEdit>> {
    std::vector<TextEdit> Out;
    for (const AtomicUse &U : P.Uses) {
      auto RefSp = looseExprSpan(Ctx, U.Base);
      auto CallSp = looseExprSpan(Ctx, U.Call);
      auto ArgSp = looseExprSpan(Ctx, U.Call->getArg(0));
      bool Guard = P.Guarded && !(U.Range && *U.Range <= P.Bins);
      // The index's text is written again for a column per lane and for
      // the guard; a constant macro may end it (`% NBINS`).
      std::optional<SourceSpan> IdxSp;
      if (U.Index && (P.Layout == Copies::Lane || Guard))
        IdxSp =
            onlyConstantMacros(U.Index, Ctx.AST)
                ? fileSpan(Ctx.AST.getSourceManager(), Ctx.AST.getLangOpts(),
                           U.Index->getSourceRange(), Ctx.file())
                : looseExprSpan(Ctx, U.Index);
      if (!RefSp || !CallSp || !ArgSp ||
          (U.Index && (P.Layout == Copies::Lane || Guard) && !IdxSp))
        return reject(E, "macro",
                      "the atomic at " + where(Ctx, U.Call) +
                          " is written inside a macro expansion");
      std::string Idx =
          IdxSp ? Render(IdxSp->Begin.Offset, IdxSp->End.Offset, Loads) : "0";
      TextEdit Target;
      if (P.Layout == Copies::Lane)
        Target = {ArgSp->Begin.Offset, ArgSp->End.Offset - ArgSp->Begin.Offset,
                  "&" + Priv + "[" + Idx + "][threadIdx.x % 32]"};
      else
        Target = {RefSp->Begin.Offset, RefSp->End.Offset - RefSp->Begin.Offset,
                  P.Layout == Copies::Warp ? Priv + "[threadIdx.x / 32]"
                                           : Priv};
      if (!Guard) {
        Out.push_back(Target);
        continue;
      }
      std::vector<TextEdit> PrivEdits = {Target};
      for (const TextEdit &T : Loads)
        if (Outside(T, {Target}))
          PrivEdits.push_back(T);
      std::string PrivCall =
          Render(CallSp->Begin.Offset, CallSp->End.Offset, PrivEdits);
      std::string Call =
          Render(CallSp->Begin.Offset, CallSp->End.Offset, Loads);
      std::string Cond = "(size_t)" + parenthesize(Idx) + " < " + Bins;
      Out.push_back({CallSp->Begin.Offset,
                     CallSp->End.Offset - CallSp->Begin.Offset,
                     "(" + Cond + " ? " + PrivCall + " : " + Call + ")"});
    }
    for (const TextEdit &T : Loads)
      if (Outside(T, Out))
        Out.push_back(T);
    return Out;
  };
  auto Edits0 = BodyEdits({});
  if (!Edits0)
    return Edits0.takeError();
  std::vector<TextEdit> Edits = std::move(*Edits0);

  std::string Indent = "  ";
  if (!Body->body_empty())
    if (auto Sp = looseStmtSpan(Ctx, Body->body_front()))
      Indent = indentationAt(Ctx.Code, Sp->Begin.Offset);
  const std::string &I = Indent;
  std::string Step = " += blockDim.x * gridDim.x";

  if (P.Loop) {
    // The loop becomes a loop over words (when the pointers are aligned)
    // and a scalar loop for the rest.
    const InputLoop &L = *P.Loop;
    const clang::Stmt *First, *Last;
    std::optional<SourceSpan> Region;
    std::string TypeName; // "int i", as written
    std::string Init = looseExprText(Ctx, L.Index->getInit());
    auto DeclSp =
        looseStmtSpan(Ctx, L.For ? L.For->getInit() : P.Map->IndexDecl);
    auto InitSp = looseExprSpan(Ctx, L.Index->getInit());
    bool Wrap = false; // several statements: braces around them
    if (L.For) {
      Region = looseStmtSpan(Ctx, L.For);
      First = Last = L.For->getBody();
    } else if (!P.Map->EarlyReturn) {
      auto GuardSp = looseStmtSpan(Ctx, P.Map->Guard);
      if (DeclSp && GuardSp)
        Region = offsetSpan(DeclSp->Begin.Offset, GuardSp->End.Offset);
      First = Last = P.Map->Guard->getThen();
    } else {
      First = P.Map->Body.front();
      Last = P.Map->Body.back();
      auto LastSp = looseStmtSpan(Ctx, Last);
      if (DeclSp && LastSp)
        Region = offsetSpan(DeclSp->Begin.Offset, LastSp->End.Offset);
      Wrap = true;
    }
    auto FirstSp = looseStmtSpan(Ctx, First), LastSp = looseStmtSpan(Ctx, Last);
    if (!Region || !DeclSp || !InitSp || !FirstSp || !LastSp)
      return reject(E, "macro", "the loop or its body is in a macro");
    TypeName = loopVariable(
        StringRef(Ctx.Code.substr(DeclSp->Begin.Offset,
                                  InitSp->Begin.Offset - DeclSp->Begin.Offset))
            .rtrim(" ="),
        L.Index);
    std::string Name = L.Index->getName().str();
    std::string Type = L.Index->getType().getUnqualifiedType().getAsString(
        Ctx.AST.getPrintingPolicy());
    std::string N = looseExprText(Ctx, L.Bound);
    std::string PN = parenthesize(N);
    int64_t Per = P.VectorBytes / L.ElemBytes;
    std::string PerText = std::to_string(Per);
    std::string From = freshName(Ctx.Code, "scalar_from");
    std::string V = freshName(Ctx.Code, "v");
    std::string K = freshName(Ctx.Code, "e");
    std::string Word = P.VectorBytes == 4   ? "unsigned int"
                       : P.VectorBytes == 8 ? "uint2"
                                            : "uint4";
    std::map<const clang::ParmVarDecl *, std::string> WordName, ElemName;
    std::vector<std::string> Aligned;
    for (const clang::ParmVarDecl *A : L.Arrays) {
      std::string AN = A->getName().str();
      WordName[A] = freshName(Ctx.Code, AN + "_v");
      ElemName[A] = freshName(Ctx.Code, AN + "_e");
      Aligned.push_back("reinterpret_cast<unsigned long long>(" + AN + ") % " +
                        std::to_string(P.VectorBytes) + " == 0");
    }
    std::vector<TextEdit> Loads;
    for (const InputLoad &Ld : L.Loads) {
      auto Sp = looseExprSpan(Ctx, Ld.Access);
      if (!Sp)
        return reject(E, "macro",
                      "the load at " + where(Ctx, Ld.Access) +
                          " is written inside a macro expansion");
      Loads.push_back({Sp->Begin.Offset, Sp->End.Offset - Sp->Begin.Offset,
                       ElemName[Ld.Array] + "[" + K + "]"});
    }
    auto VecEdits = BodyEdits(Loads);
    if (!VecEdits)
      return VecEdits.takeError();
    // The body as the statement of a loop whose head is at indent I.
    auto BodyText = [&](const std::vector<TextEdit> &Inner) {
      std::string T = Render(FirstSp->Begin.Offset, LastSp->End.Offset, Inner);
      if (!Wrap)
        return T;
      return "{\n" + I + "  " + indentLines(T, "  ") + "\n" + I + "}";
    };
    std::string VecBody = indentLines(BodyText(*VecEdits), "    ");
    std::string Out = Type + " " + From + " = 0;\n";
    Out += I + "if (" + join(Aligned, " &&\n" + I + "    ") + ") {\n";
    Out += I + "  " + From + " = " + PN + " / " + PerText + " * " + PerText +
           ";\n";
    Out += I + "  for (" + Type + " " + V + " = " + Init + "; " + V + " < " +
           PN + " / " + PerText + "; " + V + Step + ") {\n";
    for (const clang::ParmVarDecl *A : L.Arrays) {
      std::string Elem =
          A->getType()->getPointeeType().getUnqualifiedType().getAsString(
              Ctx.AST.getPrintingPolicy());
      Out += I + "    " + Word + " " + WordName[A] +
             " = reinterpret_cast<const " + Word + " *>(" + A->getName().str() +
             ")[" + V + "];\n";
      Out += I + "    const " + Elem + " *" + ElemName[A] +
             " = reinterpret_cast<const " + Elem + " *>(&" + WordName[A] +
             ");\n";
    }
    Out += I + "    #pragma unroll\n";
    Out += I + "    for (int " + K + " = 0; " + K + " < " + PerText + "; ++" +
           K + ")" + (VecBody.front() == '{' ? " " : "\n" + I + "      ") +
           VecBody + "\n";
    Out += I + "  }\n";
    Out += I + "}\n";
    Out += I + "for (" + TypeName + " = " + From + " + " + Init + "; " + Name +
           " < " + N + "; " + Name + Step + ") " + BodyText(Edits);
    llvm::erase_if(Edits, [&](const TextEdit &T) {
      return T.Offset >= Region->Begin.Offset && T.Offset < Region->End.Offset;
    });
    Edits.push_back(
        {Region->Begin.Offset, Region->End.Offset - Region->Begin.Offset, Out});
  } else if (P.Map) {
    // One element per thread becomes a grid-stride loop.
    const ThreadItem &M = *P.Map;
    auto DeclSp = looseStmtSpan(Ctx, M.IndexDecl);
    auto GuardSp = looseStmtSpan(Ctx, M.Guard);
    auto InitSp = looseExprSpan(Ctx, M.Index->getInit());
    if (!DeclSp || !GuardSp || !InitSp)
      return reject(E, "macro", "the index or its guard is in a macro");
    std::string Name = M.Index->getName().str();
    std::string Type = Ctx.Code
                           .substr(DeclSp->Begin.Offset,
                                   InitSp->Begin.Offset - DeclSp->Begin.Offset)
                           .str();
    // "int i = " -> "int i"
    Type = loopVariable(StringRef(Type).rtrim(" ="), M.Index);
    std::string Head =
        "for (" + Type + " = " + looseExprText(Ctx, M.Index->getInit()) + "; " +
        Name + " < " + looseExprText(Ctx, M.Bound) + "; " + Name + Step + ")";
    if (!M.EarlyReturn) {
      // `T i = ...; if (i < n)` -> `for (...)`; the guarded statement
      // stays as it is.
      auto CondSp = looseExprSpan(Ctx, M.Guard->getCond());
      unsigned RParen = CondSp->End.Offset;
      while (RParen < Ctx.Code.size() && Ctx.Code[RParen] != ')')
        ++RParen;
      Edits.push_back(
          {DeclSp->Begin.Offset, RParen + 1 - DeclSp->Begin.Offset, Head});
    } else {
      // `T i = ...; if (i >= n) return; rest` -> `for (...) { rest }`.
      auto LastSp = looseStmtSpan(Ctx, M.Body.back());
      auto FirstSp = looseStmtSpan(Ctx, M.Body.front());
      if (!LastSp || !FirstSp)
        return reject(E, "macro", "the kernel body has macro statements");
      std::string Rest =
          Render(FirstSp->Begin.Offset, LastSp->End.Offset, Edits);
      llvm::erase_if(Edits, [&](const TextEdit &T) {
        return T.Offset >= FirstSp->Begin.Offset &&
               T.Offset < LastSp->End.Offset;
      });
      Edits.push_back({DeclSp->Begin.Offset,
                       LastSp->End.Offset - DeclSp->Begin.Offset,
                       Head + " {\n" + Indent + "  " + indentLines(Rest, "  ") +
                           "\n" + Indent + "}"});
    }
  }

  if (P.EarlyReturn) {
    // `if (c) return; rest` -> `if (!(c)) { rest }`: the threads that
    // returned reach the merge and add nothing.
    auto IfSp = looseStmtSpan(Ctx, P.EarlyReturn);
    auto CondSp = looseExprSpan(Ctx, P.EarlyReturn->getCond());
    auto LastSp = looseStmtSpan(Ctx, Body->body_back());
    const clang::Stmt *const *It = llvm::find(Body->body(), P.EarlyReturn);
    auto FirstSp = looseStmtSpan(Ctx, *(It + 1));
    if (!IfSp || !CondSp || !LastSp || !FirstSp)
      return reject(E, "macro",
                    "the early return or what follows it is written inside "
                    "a macro expansion");
    std::string Rest = Render(FirstSp->Begin.Offset, LastSp->End.Offset, Edits);
    llvm::erase_if(Edits, [&](const TextEdit &T) {
      return T.Offset >= FirstSp->Begin.Offset && T.Offset < LastSp->End.Offset;
    });
    Edits.push_back(
        {IfSp->Begin.Offset, LastSp->End.Offset - IfSp->Begin.Offset,
         "if (!(" + looseExprText(Ctx, P.EarlyReturn->getCond()) + ")) {\n" +
             I + "  " + indentLines(Rest, "  ") + "\n" + I + "}"});
  }

  // The merge's local total, named apart from the array's variable.
  std::string Sum = P.Array->getName() == "sum" ? freshName(Ctx.Code, "sum")
                                                : std::string("sum");
  std::string Pro, Epi;
  if (P.Layout == Copies::Warp) {
    Pro = "\n" + I + "__shared__ " + P.ElemType + " " + Priv + "[" +
          std::to_string(Warps) + "][" + Bins + "];\n" + I + "for (int " + B +
          " = threadIdx.x; " + B + " < " + std::to_string(Warps * P.Bins) +
          "; " + B + " += blockDim.x)\n" + I + "  " + Priv + "[" + B + " / " +
          Bins + "][" + B + " % " + Bins + "] = 0;\n" + I + "__syncthreads();";
    Epi = "\n" + I + "__syncthreads();\n" + I + "for (int " + B +
          " = threadIdx.x; " + B + " < " + Bins + "; " + B +
          " += blockDim.x) {\n" + I + "  " + P.ElemType + " " + Sum +
          " = 0;\n" + I + "  for (int " + W + " = 0; " + W + " < " +
          std::to_string(Warps) + "; ++" + W + ")\n" + I + "    " + Sum +
          " += " + Priv + "[" + W + "][" + B + "];\n" + I + "  if (" + Sum +
          " != 0)\n" + I + "    atomicAdd(&" + AName + "[" + B + "], " + Sum +
          ");\n" + I + "}";
  } else if (P.Layout == Copies::Lane) {
    // Zeroed and summed along rows; the sum reads lane (l + bin) % 32 first
    // so the threads of a warp start in different banks.
    std::string Ln = freshName(Ctx.Code, "lane");
    Pro = "\n" + I + "__shared__ " + P.ElemType + " " + Priv + "[" + Bins +
          "][32];\n" + I + "for (int " + B + " = threadIdx.x; " + B + " < " +
          std::to_string(32 * P.Bins) + "; " + B + " += blockDim.x)\n" + I +
          "  " + Priv + "[" + B + " / 32][" + B + " % 32] = 0;\n" + I +
          "__syncthreads();";
    Epi = "\n" + I + "__syncthreads();\n" + I + "for (int " + B +
          " = threadIdx.x; " + B + " < " + Bins + "; " + B +
          " += blockDim.x) {\n" + I + "  " + P.ElemType + " " + Sum +
          " = 0;\n" + I + "  for (int " + Ln + " = 0; " + Ln + " < 32; ++" +
          Ln + ")\n" + I + "    " + Sum + " += " + Priv + "[" + B + "][(" + Ln +
          " + " + B + ") % 32];\n" + I + "  if (" + Sum + " != 0)\n" + I +
          "    atomicAdd(&" + AName + "[" + B + "], " + Sum + ");\n" + I + "}";
  } else {
    Pro = "\n" + I + "__shared__ " + P.ElemType + " " + Priv + "[" + Bins +
          "];\n" + I + "for (int " + B + " = threadIdx.x; " + B + " < " + Bins +
          "; " + B + " += blockDim.x)\n" + I + "  " + Priv + "[" + B +
          "] = 0;\n" + I + "__syncthreads();";
    Epi = "\n" + I + "__syncthreads();\n" + I + "for (int " + B +
          " = threadIdx.x; " + B + " < " + Bins + "; " + B +
          " += blockDim.x)\n" + I + "  if (" + Priv + "[" + B + "] != 0)\n" +
          I + "    atomicAdd(&" + AName + "[" + B + "], " + Priv + "[" + B +
          "]);";
  }
  // Prologue after '{', epilogue after the last statement.
  unsigned EpiAt = End;
  if (!Body->body_empty())
    if (auto Sp = looseStmtSpan(Ctx, Body->body_back()))
      EpiAt = Sp->End.Offset;
  Edits.push_back({Begin, 0, Pro});
  Edits.push_back({EpiAt, 0, Epi});
  std::string NewBody = spliceText(Ctx.Code, Begin, End, Edits);

  clang::tooling::Replacements Repls;
  if (Error Err = addReplacement(Repls,
                                 clang::tooling::Replacement(
                                     Ctx.FileName, Begin, End - Begin, NewBody),
                                 E))
    return std::move(Err);
  for (const LaunchSite &L : P.Kernel.Info->Launches) {
    if (P.CapGrid)
      if (Error Err = addReplacement(
              Repls,
              replaceSpan(Ctx, L.GridRange, cappedGrid(L.Grid, P.MaxBlocks)),
              E))
        return std::move(Err);
    if (P.SetBlock)
      if (Error Err = addReplacement(
              Repls,
              replaceSpan(Ctx, L.BlockRange, std::to_string(P.BlockSize)), E))
        return std::move(Err);
  }
  return Repls;
}

} // namespace privatizeatomics
} // namespace optiml
