//===- SharedTilingMicro.cpp - The product's 8 x 8 register tile ---------===//
//
// shared-tiling micro=8 on a matmul-like kernel (SharedTiling.cpp has the
// shape and the plain tiles); and a stencil kernel template's window loops
// read per instantiation (templateLoopRanges), with the assertions that
// pin the values the rewrite assumes (addPinAsserts).
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "../../Patterns/CountingLoop.h"
#include "../TransformSupport.h"
#include "SharedStaging.h"
#include "SharedTilingInternal.h"
#include "optiml/Frontend/ASTUtil.h"
#include "optiml/Support/TextTemplate.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/Decl.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include <array>
#include <functional>
#include <map>

using namespace clang;
using namespace llvm;

namespace optiml {
namespace sharedtiling {
namespace {

/// The register-blocked product's text (rewriteMicroTile fills it in).
constexpr StringRef BlockedTemplate =
    R"(// ${Micro}: 128 x 128 outputs per block, 8 x 8 per thread.
__shared__ ${TA} ${As}[2][8][132];
__shared__ ${TB} ${Bs}[2][8][128];
const int ${Tid} = threadIdx.y * 16 + threadIdx.x;
const ${RowT} ${RowBase} = blockIdx.y * 128;
const ${ColT} ${ColBase} = blockIdx.x * 128;
if (${RowBase} >= gridDim.y * 16 || ${ColBase} >= gridDim.x * 16)
  return;
${AccT} ${AccR}[8][8];
for (int ${I} = 0; ${I} < 8; ++${I})
  for (int ${J} = 0; ${J} < 8; ++${J})
    ${AccR}[${I}][${J}] = ${Init};
${TA} ${Av}[4];
${TB} ${Bv}[4];
${Load0}for (int ${I} = 0; ${I} < 4; ++${I}) {
  ${As}[0][${Tid} % 8][${Tid} / 8 + 32 * ${I}] = ${Av}[${I}];
  ${Bs}[0][${Tid} / 128 + 2 * ${I}][${Tid} % 128] = ${Bv}[${I}];
}
__syncthreads();
int ${Buf} = 0;
for (${KT} ${K0} = 0; ${K0} < ${K}; ${K0} += 8) {
  const bool ${More} = ${K0} + 8 < ${K};
  if (${More}) {
${LoadNext}  }
#pragma unroll
  for (int ${Kk} = 0; ${Kk} < 8; ++${Kk}) {
    ${TA} ${Ra}[8];
    ${TB} ${Rb}[8];
    for (int ${I} = 0; ${I} < 4; ++${I}) {
      ${Ra}[${I}] = ${As}[${Buf}][${Kk}][threadIdx.y * 4 + ${I}];
      ${Ra}[4 + ${I}] = ${As}[${Buf}][${Kk}][64 + threadIdx.y * 4 + ${I}];
      ${Rb}[${I}] = ${Bs}[${Buf}][${Kk}][threadIdx.x * 4 + ${I}];
      ${Rb}[4 + ${I}] = ${Bs}[${Buf}][${Kk}][64 + threadIdx.x * 4 + ${I}];
    }
    for (int ${I} = 0; ${I} < 8; ++${I})
      for (int ${J} = 0; ${J} < 8; ++${J})
        ${Update};
  }
  if (${More}) {
    for (int ${I} = 0; ${I} < 4; ++${I}) {
      ${As}[1 - ${Buf}][${Tid} % 8][${Tid} / 8 + 32 * ${I}] = ${Av}[${I}];
      ${Bs}[1 - ${Buf}][${Tid} / 128 + 2 * ${I}][${Tid} % 128] = ${Bv}[${I}];
    }
    __syncthreads();
    ${Buf} = 1 - ${Buf};
  }
}
for (int ${I} = 0; ${I} < 8; ++${I}) {
  ${RowT} ${R} = ${RowBase} + (${I} < 4 ? threadIdx.y * 4 + ${I} : 64 + threadIdx.y * 4 + ${I} - 4);
  for (int ${J} = 0; ${J} < 8; ++${J}) {
    ${ColT} ${C} = ${ColBase} + (${J} < 4 ? threadIdx.x * 4 + ${J} : 64 + threadIdx.x * 4 + ${J} - 4);
    if (${R} < ${M} && ${C} < ${N} && ${R} < gridDim.y * 16 && ${C} < gridDim.x * 16) {
${Post}    }
  }
})";

} // namespace

// The register-blocked product (micro=8). Each block of 16 x 16 threads
// computes a 128 x 128 tile of the outputs, each thread an 8 x 8 register
// tile (rows ty*4..+3 and 64+ty*4..+3, columns likewise with tx), over K in
// steps of 8 through two shared buffers: the next step's elements are
// loaded into registers while the current step is used. Exact: each output
// still adds its products in k order from the same start value (the
// zero-filled tail adds +0), and is stored by the original statements
// (indices renamed) under the original bounds. The launch is unchanged:
// blocks past the 128 x 128 tiles that cover the outputs the launch's grid
// reaches return at once, and no output beyond that grid is stored. The
// indices and the guard are replaced with the rest.
Expected<tooling::Replacements>
rewriteMicroTile(const EditContext &Ctx, const Edit &E, const MatmulPlan &P) {
  StringRef Code = Ctx.Code;
  std::string FnText = Code.slice(P.Kernel.Info->Range.Begin.Offset,
                                  P.Kernel.Info->Range.End.Offset)
                           .str();
  const auto *Acc = cast<VarDecl>(P.AccDecl->getSingleDecl());
  auto Fresh = [&](StringRef Base) {
    std::string N = freshName(FnText, Base);
    FnText += " " + N; // later names differ from this one too
    return N;
  };
  std::string As = Fresh("As"), Bs = Fresh("Bs"), AccR = Fresh("accR"),
              Tid = Fresh("tid"), RowBase = Fresh("rowBase"),
              ColBase = Fresh("colBase"), K0 = Fresh("k0"), Buf = Fresh("buf"),
              Av = Fresh("aNext"), Bv = Fresh("bNext"), Ra = Fresh("ra"),
              Rb = Fresh("rb"), R = Fresh("r"), C = Fresh("c"),
              Kk = Fresh("kk"), I = Fresh("i"), J = Fresh("j"),
              More = Fresh("more"), ARowV = Fresh("ar"), AkV = Fresh("ak"),
              BkV = Fresh("bk"), BcV = Fresh("bc");
  std::string KType = typeName(P.K->getType(), Ctx.AST);
  std::string RowType = typeName(P.Row->getType(), Ctx.AST);
  std::string ColType = typeName(P.Col->getType(), Ctx.AST);
  std::string AccType = typeName(Acc->getType(), Ctx.AST);
  // Element e of a step's A tile (128 rows x 8 k) is row e / 8, k e % 8;
  // of its B tile (8 k x 128 columns) k e / 128, column e % 128. The
  // pointer aliases' declarations go with the indices: each use reads
  // through the initializer, renamed alike.
  auto ATo = inlinedAliases(Ctx, P.Aliases, {{P.Row, ARowV}, {P.K, AkV}});
  auto BTo = inlinedAliases(Ctx, P.Aliases, {{P.K, BkV}, {P.Col, BcV}});
  auto PostTo = inlinedAliases(
      Ctx, P.Aliases,
      {{P.Row, R}, {P.Col, C}, {Acc, AccR + "[" + I + "][" + J + "]"}});
  if (!ATo || !BTo || !PostTo)
    return reject(E, "internal",
                  "kernel '" + E.Target +
                      "': a pointer's declaration has no place in the file");
  auto ALoad = renamedText(Ctx, P.A.Access, *ATo, false);
  auto BLoad = renamedText(Ctx, P.B.Access, *BTo, false);
  std::vector<std::string> Post;
  for (const Stmt *S : P.Post) {
    auto T = renamedText(Ctx, S, *PostTo, true);
    if (!T)
      return reject(E, "internal",
                    "kernel '" + E.Target +
                        "': the code after the loop has no place in the file");
    Post.push_back(reindent(
        *T,
        6 - int(indentationAt(Code, stmtSpan(Ctx, S)->Begin.Offset).size())));
  }
  auto InitSpan = fileSpan(Ctx.AST.getSourceManager(), Ctx.AST.getLangOpts(),
                           Acc->getInit()->getSourceRange(), Ctx.file());
  if (!ALoad || !BLoad || !InitSpan)
    return reject(E, "internal",
                  "kernel '" + E.Target +
                      "': a part of the loop has no place in the file");
  std::string PostText;
  for (const std::string &T : Post)
    PostText += "      " + T + "\n";
  // One step's elements into registers, from k = \p KFrom: 4 of A's tile
  // and 4 of B's per thread, zero outside the matrices.
  auto LoadStep = [&](StringRef KFrom, StringRef In) {
    return indentLines(fillTemplate(R"(for (int ${I} = 0; ${I} < 4; ++${I}) {
  ${RowT} ${ar} = ${RowBase} + ${Tid} / 8 + 32 * ${I};
  ${KT} ${ak} = ${KFrom} + ${Tid} % 8;
  ${Av}[${I}] = ${ar} < ${M} && ${ak} < ${K} ? ${ALoad} : ${ZA};
  ${KT} ${bk} = ${KFrom} + ${Tid} / 128 + 2 * ${I};
  ${ColT} ${bc} = ${ColBase} + ${Tid} % 128;
  ${Bv}[${I}] = ${bk} < ${K} && ${bc} < ${N} ? ${BLoad} : ${ZB};
}
)",
                                    {{"I", I},
                                     {"RowT", RowType},
                                     {"ColT", ColType},
                                     {"KT", KType},
                                     {"ar", ARowV},
                                     {"ak", AkV},
                                     {"bk", BkV},
                                     {"bc", BcV},
                                     {"RowBase", RowBase},
                                     {"ColBase", ColBase},
                                     {"Tid", Tid},
                                     {"KFrom", KFrom.str()},
                                     {"Av", Av},
                                     {"Bv", Bv},
                                     {"M", P.RowBound},
                                     {"N", P.ColBound},
                                     {"K", P.KBound},
                                     {"ALoad", *ALoad},
                                     {"BLoad", *BLoad},
                                     {"ZA", P.A.Zero},
                                     {"ZB", P.B.Zero}}),
                       In)
        .insert(0, In.str());
  };
  // The update as the loop wrote it: fused where it was.
  std::string Acc8 = AccR + "[" + I + "][" + J + "]";
  std::string Update =
      P.Fma.empty() ? Acc8 + " += " + Ra + "[" + I + "] * " + Rb + "[" + J + "]"
                    : Acc8 + " = " + P.Fma + "(" + Ra + "[" + I + "], " + Rb +
                          "[" + J + "], " + Acc8 + ")";
  std::string Body = fillTemplate(
      BlockedTemplate,
      {{"Micro", "shared-tiling micro=8"},
       {"TA", P.A.ElemType},
       {"TB", P.B.ElemType},
       {"As", As},
       {"Bs", Bs},
       {"Tid", Tid},
       {"RowT", RowType},
       {"ColT", ColType},
       {"KT", KType},
       {"RowBase", RowBase},
       {"ColBase", ColBase},
       {"AccT", AccType},
       {"AccR", AccR},
       {"Init", Code.slice(InitSpan->Begin.Offset, InitSpan->End.Offset).str()},
       {"Av", Av},
       {"Bv", Bv},
       {"Load0", LoadStep("0", "")},
       {"LoadNext", LoadStep(K0 + " + 8", "    ")},
       {"K0", K0},
       {"M", P.RowBound},
       {"N", P.ColBound},
       {"K", P.KBound},
       {"Buf", Buf},
       {"More", More},
       {"Kk", Kk},
       {"Ra", Ra},
       {"Rb", Rb},
       {"I", I},
       {"J", J},
       {"R", R},
       {"C", C},
       {"Update", Update},
       {"Post", PostText}});
  std::string Out = indentLines(Body, P.Indent);
  // The row and column indices (the body's first statements, before the
  // guard) go too: nothing else reads them, and the stores read r and c.
  const Stmt *First =
      cast<CompoundStmt>(P.Kernel.Decl->getBody())->body_front();
  auto FirstSpan = stmtSpan(Ctx, First);
  if (!FirstSpan)
    return reject(E, "internal",
                  "kernel '" + E.Target +
                      "': the indices have no place in "
                      "the file");
  tooling::Replacements Repl;
  if (Error Err = addReplacement(
          Repl,
          replaceSpan(Ctx, offsetSpan(FirstSpan->Begin.Offset, P.RegionEnd),
                      Out),
          E))
    return std::move(Err);
  // 256 threads, two blocks per multiprocessor: ptxas keeps the 64
  // accumulators and the prefetched step within 128 registers. An existing
  // __launch_bounds__ stays as written (every launch is 16 x 16, so its
  // maximum is at least 256).
  if (!P.Kernel.Decl->hasAttr<CUDALaunchBoundsAttr>()) {
    const SourceManager &SM = Ctx.AST.getSourceManager();
    SourceLocation Name = SM.getExpansionLoc(P.Kernel.Decl->getLocation());
    if (Error Err = addReplacement(
            Repl,
            insertAt(Ctx, SM.getFileOffset(Name), "__launch_bounds__(256, 2) "),
            E))
      return std::move(Err);
  }
  return Repl;
}

//===--- A stencil template's window loops, per instantiation ------------===//

/// The integer template parameters of \p Tmpl that \p S uses (through the
/// initializers of locals whose value depends on them, `constexpr int D =
/// 2 * R + 1`), into \p Out; else the part of \p S that depends on the
/// template in another way (a type's size, a member of a dependent type).
static std::string boundParams(
    const EditContext &Ctx, const Stmt *S, const FunctionTemplateDecl *Tmpl,
    std::vector<const NonTypeTemplateParmDecl *> &Out, unsigned Depth = 0) {
  const auto *E = dyn_cast_or_null<Expr>(S);
  if (!E || !E->isValueDependent())
    return "";
  auto Other = [&](const Twine &What) {
    return ("'" + What +
            "', which is not an integer template parameter of the kernel")
        .str();
  };
  if (const auto *DR = dyn_cast<DeclRefExpr>(E)) {
    const ValueDecl *D = DR->getDecl();
    if (const auto *NT = dyn_cast<NonTypeTemplateParmDecl>(D)) {
      if (NT->getDepth() != Tmpl->getTemplateParameters()->getDepth() ||
          NT->isParameterPack() || !NT->getType()->isIntegerType() ||
          NT->getName().empty())
        return Other(NT->getName().empty() ? "(unnamed)" : NT->getName());
      if (!is_contained(Out, NT))
        Out.push_back(NT);
      return "";
    }
    const auto *V = dyn_cast<VarDecl>(D);
    if (V && V->isLocalVarDecl() && V->hasInit() && Depth < 8)
      return boundParams(Ctx, V->getInit(), Tmpl, Out, Depth + 1);
    return Other(D->getName());
  }
  bool Inner = false;
  for (const Stmt *C : E->children())
    if (const auto *CE = dyn_cast_or_null<Expr>(C);
        CE && CE->isValueDependent()) {
      Inner = true;
      if (std::string W = boundParams(Ctx, CE, Tmpl, Out, Depth); !W.empty())
        return W;
    }
  if (!Inner)
    return Other(exprText(Ctx, E));
  return "";
}

/// The value instantiation \p Inst gives the template parameter \p NT.
static std::optional<int64_t> argValue(const FunctionDecl *Inst,
                                       const NonTypeTemplateParmDecl *NT) {
  const TemplateArgumentList *Args = Inst->getTemplateSpecializationArgs();
  if (!Args || NT->getIndex() >= Args->size() ||
      Args->get(NT->getIndex()).getKind() != TemplateArgument::Integral)
    return std::nullopt;
  return Args->get(NT->getIndex()).getAsIntegral().getExtValue();
}

/// The `for` loops around \p S up to the kernel's body, innermost first.
static std::vector<const ForStmt *> loopsAround(const EditContext &Ctx,
                                                const Stmt *S) {
  std::vector<const ForStmt *> Out;
  DynTypedNodeList Ps = Ctx.AST.getParents(*S);
  for (unsigned Depth = 0; !Ps.empty() && Depth < 64; ++Depth) {
    const Stmt *Par = Ps[0].get<Stmt>();
    if (!Par) {
      const Decl *D = Ps[0].get<Decl>();
      if (!D || isa<FunctionDecl>(D))
        break;
      Ps = Ctx.AST.getParents(*D);
      continue;
    }
    if (const auto *F = dyn_cast<ForStmt>(Par))
      Out.push_back(F);
    Ps = Ctx.AST.getParents(*Par);
  }
  return Out;
}

/// The loops around \p AS (up to the kernel's body) whose bounds depend
/// on template parameters.
static std::vector<const ForStmt *> dependentLoopsAround(const EditContext &Ctx,
                                                         const Stmt *AS) {
  std::vector<const ForStmt *> Out;
  for (const ForStmt *F : loopsAround(Ctx, AS)) {
    const auto *DS = dyn_cast_or_null<DeclStmt>(F->getInit());
    bool Dependent = F->getCond() && F->getCond()->isValueDependent();
    if (DS)
      for (const Decl *D : DS->decls())
        if (const auto *V = dyn_cast<VarDecl>(D);
            V && V->hasInit() && V->getInit()->isValueDependent())
          Dependent = true;
    if (Dependent)
      Out.push_back(F);
  }
  return Out;
}

std::string templateLoopRanges(
    const EditContext &Ctx, const FunctionDecl *Kernel,
    ArrayRef<const ArraySubscriptExpr *> Reads,
    std::map<const ValueDecl *, std::pair<int64_t, int64_t>> &LoopVars,
    std::vector<TemplatePin> &Pins) {
  const FunctionTemplateDecl *Tmpl = Kernel->getDescribedFunctionTemplate();
  std::vector<const FunctionDecl *> Insts = templateInstantiations(Kernel);
  std::vector<DenseMap<const VarDecl *, std::pair<int64_t, int64_t>>> Ranges;
  for (const FunctionDecl *Inst : Insts)
    Ranges.push_back(constantLoopRanges(Inst->getBody(), Ctx.AST, true));
  std::vector<const ForStmt *> Done;
  for (const ArraySubscriptExpr *AS : Reads)
    for (const ForStmt *F : dependentLoopsAround(Ctx, AS)) {
      if (is_contained(Done, F))
        continue;
      Done.push_back(F);
      std::string Loop = "the loop at " + where(Ctx, F) + " around the read '" +
                         exprText(Ctx, AS) + "'";
      std::optional<CountingLoop> C = countingLoop(F, Ctx.AST);
      if (!C || C->Step != 1 || !Tmpl)
        return Loop + " has bounds that depend on template parameters but "
                      "does not count up by one ('for (int v = a; v <= b; "
                      "++v)') in a kernel template: its range cannot be "
                      "read per instantiation";
      std::vector<const NonTypeTemplateParmDecl *> Params;
      for (const Expr *B : {C->Start, C->Bound})
        if (std::string W = boundParams(Ctx, B, Tmpl, Params); !W.empty())
          return Loop + " has bounds that use " + W +
                 ": the rewrite can assume (and assert) only such a "
                 "parameter's value";
      if (Insts.empty())
        return Loop + " has bounds that depend on template parameters, and "
                      "the template is never instantiated in this file, so "
                      "its halo is unknown";
      std::vector<const VarDecl *> Vars = instantiatedVars(C->Var, Kernel);
      std::optional<std::pair<int64_t, int64_t>> Range;
      for (size_t I = 0; I < Insts.size(); ++I) {
        std::string In = instantiationName(Insts[I]);
        auto It = I < Vars.size() && Vars[I] ? Ranges[I].find(Vars[I])
                                             : Ranges[I].end();
        if (It == Ranges[I].end())
          return Loop + " does not run over a constant range in " + In +
                 " (a radius known only at run time cannot size the shared "
                 "tile)";
        for (const NonTypeTemplateParmDecl *NT : Params) {
          std::optional<int64_t> V = argValue(Insts[I], NT);
          if (!V)
            return Loop + " has bounds that use '" + NT->getNameAsString() +
                   "', whose value in " + In + " is not an integer";
          auto P = find_if(Pins,
                           [&](const TemplatePin &Q) { return Q.Param == NT; });
          if (P == Pins.end()) {
            Pins.push_back({NT, *V, In});
          } else if (P->Value != *V) {
            return Loop + " has bounds that use the template parameter '" +
                   NT->getNameAsString() + "', which is " +
                   std::to_string(P->Value) + " in " + P->Seen + " but " +
                   std::to_string(*V) + " in " + In +
                   ": one rewrite of the template stages one halo (launch "
                   "one value, or give each its own kernel)";
          } else if (!StringRef(P->Seen).contains(In)) {
            P->Seen += ", " + In;
          }
        }
        if (Range && *Range != It->second)
          return Loop + " runs over another range in " + In;
        Range = It->second;
      }
      LoopVars[C->Var] = *Range;
    }
  return "";
}

std::string unknownLoopAround(
    const EditContext &Ctx, const Stmt *AS,
    const std::map<const ValueDecl *, std::pair<int64_t, int64_t>> &LoopVars) {
  for (const ForStmt *F : loopsAround(Ctx, AS)) {
    std::optional<CountingLoop> C = countingLoop(F, Ctx.AST);
    if (!C || !LoopVars.count(C->Var))
      return " (it is inside the loop at " + where(Ctx, F) +
             ", whose range is not constant: the halo must be known when "
             "the kernel is compiled)";
  }
  return "";
}

std::string pinsNote(ArrayRef<TemplatePin> Pins) {
  std::vector<std::string> Parts;
  for (const TemplatePin &P : Pins)
    Parts.push_back(P.Param->getNameAsString() + " = " +
                    std::to_string(P.Value) + " (" + P.Seen + ")");
  return Parts.empty() ? std::string()
                       : " with " + join(Parts, ", ") +
                             ", the value every instantiation in this file "
                             "gives (the rewrite asserts it)";
}

Error addPinAsserts(const EditContext &Ctx, const Edit &E, const StencilPlan &P,
                    tooling::Replacements &R) {
  if (P.Pins.empty())
    return Error::success();
  auto Body = looseStmtSpan(Ctx, P.Kernel.Decl->getBody());
  if (!Body || Ctx.Code[Body->Begin.Offset] != '{')
    return reject(E, "not-applicable",
                  "kernel '" + E.Target +
                      "': its body's brace has no place in the file");
  std::string Text;
  for (const TemplatePin &Pin : P.Pins) {
    std::string Cond =
        Pin.Param->getNameAsString() + " == " + std::to_string(Pin.Value);
    Text += "\n" + P.Indent + "static_assert(" + Cond +
            ", \"shared-tiling staged the halo for " + Cond +
            "; apply it again for another value\");";
  }
  return addReplacement(R, insertAt(Ctx, Body->Begin.Offset + 1, Text), E);
}

} // namespace sharedtiling
} // namespace optiml
