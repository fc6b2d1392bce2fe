//===- Vectorize.cpp - Vector loads and stores in map kernels -------------===//
//
// A map kernel whose every global access is p[i] at the thread's own element
//   int i = blockIdx.x * blockDim.x + threadIdx.x;
//   if (i < n) y[i] = a * x[i] + y[i];
// becomes a grid-stride loop over W-wide vectors (one load per array of
// float2/4, int2/4, uint2/4, short2/4, ushort2/4, char2/4, uchar2/4,
// double2 or __half2, and lane copies of the body on the components), a
// scalar loop for the tail n % W, and the plain scalar loop when any pointer
// is not aligned to the vector size. Because every loop is grid-stride, any
// grid is correct; launch grids are divided by W so each thread gets one
// vector (a grid that is a local `dim3` variable of one dimension, maybe
// shared with other launches, is divided where the launch names it:
// `dim3((grid.x + 3) / 4)`). Macros that name no variable and call nothing
// (`#define N 4096`) may appear in the guard's bound and the body.
//
// 2D maps along the rows of row-major matrices are VectorizeRows.cpp's.
// Maps whose body reads its block (`bias[blockIdx.x]`, gridDim.x) keep
// their grid and shrink their blocks instead (`blocks: "keep"`, the
// parameter's default "stride" being the form above): VectorizeKeepBlocks.cpp.
//
// In a kernel template whose arrays' element types depend on its parameters,
// the types come from the template's instantiations in the file: the vector
// path is written for the first instantiation whose arrays all have vector
// types (one without double arrays first) and runs under
// `if constexpr (std::is_same<T, float>::value)`; every other instantiation
// runs the scalar grid-stride loop, and only the launches of the vector
// path's instantiations get the smaller grid.
//
//===----------------------------------------------------------------------===//

#include "../../CatalogInternal.h"
#include "../../Patterns/ThreadPerItem.h"
#include "../TransformSupport.h"
#include "VectorizeInternal.h"
#include "optiml/Frontend/ASTUtil.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/MapVector.h"
#include <algorithm>

using namespace clang;
using namespace llvm;

namespace optiml {

std::optional<VectorForm> vectorForm(QualType T, const ASTContext &AST) {
  QualType C = T.getCanonicalType().getUnqualifiedType();
  // A type without a size here (a template's parameter, an incomplete
  // struct) has no vector form.
  if (C.isNull() || C->isDependentType() || C->isIncompleteType() ||
      !C->isConstantSizeType())
    return std::nullopt;
  int64_t Bytes = AST.getTypeSizeInChars(C).getQuantity();
  static const std::pair<BuiltinType::Kind, const char *> Builtins[] = {
      {BuiltinType::Float, "float"},   {BuiltinType::Int, "int"},
      {BuiltinType::UInt, "uint"},     {BuiltinType::Short, "short"},
      {BuiltinType::UShort, "ushort"}, {BuiltinType::SChar, "char"},
      {BuiltinType::Char_S, "char"},   {BuiltinType::UChar, "uchar"},
      {BuiltinType::Char_U, "uchar"}};
  for (const auto &[Kind, Prefix] : Builtins)
    if (C->isSpecificBuiltinType(Kind))
      return VectorForm{Prefix, Bytes, 4};
  // double2 (16 bytes); double4 is 32 bytes and deprecated in CUDA 13.
  if (C->isSpecificBuiltinType(BuiltinType::Double))
    return VectorForm{"double", Bytes, 2};
  if (const auto *RD = C->getAsRecordDecl())
    if (RD->getName() == "__half")
      return VectorForm{"__half", Bytes, 2};
  return std::nullopt;
}

std::string outsideWriteProblem(const EditContext &Ctx,
                                ArrayRef<const Stmt *> Body,
                                const ValueDecl *Index) {
  struct Decls : RecursiveASTVisitor<Decls> {
    DenseSet<const ValueDecl *> Inside;
    bool VisitVarDecl(VarDecl *V) {
      Inside.insert(V);
      return true;
    }
  } D;
  for (const Stmt *S : Body)
    D.TraverseStmt(const_cast<Stmt *>(S));
  for (const Stmt *S : Body) {
    // writtenVars() also sees writes through a member (`p.alpha = 2`).
    std::vector<std::string> Names;
    for (const ValueDecl *V : writtenVars(S))
      if (!D.Inside.contains(V) && V != Index)
        Names.push_back(V->getNameAsString());
    if (!Names.empty())
      return "the body writes '" + *llvm::min_element(Names) +
             "', which it does not declare: one thread running it for "
             "several elements would see its own earlier writes ('" +
             StringRef(stmtText(Ctx, S)).split('\n').first.trim().str() + "')";
  }
  return "";
}

namespace {

/// Records the accesses and index uses of a map's body; every access must
/// be p[i] for a pointer parameter p, or p.x[i] for a pointer member x of a
/// struct parameter p passed by value.
struct MapWalker : AccessWalker<MapWalker> {
  const EditContext &Ctx;
  const MapPattern &M;
  VectorizePlan &Plan;
  std::vector<BodyUse> *Uses = nullptr;
  std::string Problem;
  MapWalker(const EditContext &Ctx, const MapPattern &M, VectorizePlan &Plan)
      : Ctx(Ctx), M(M), Plan(Plan) {}
  void fail(const Twine &Why) {
    if (Problem.empty())
      Problem = Why.str();
  }
  bool access(ArraySubscriptExpr *A, bool Read, bool Write, bool Plain) {
    const auto *Param =
        dyn_cast_or_null<ParmVarDecl>(referencedDecl(A->getBase()));
    const FieldDecl *Field = nullptr;
    // `p.x[i]`: a pointer member of a struct parameter passed by value.
    if (const auto *ME =
            dyn_cast<MemberExpr>(A->getBase()->IgnoreParenImpCasts());
        ME && !ME->isArrow()) {
      Param = byValueStruct(ME->getBase());
      Field = dyn_cast<FieldDecl>(ME->getMemberDecl());
    }
    QualType Ptr = Field   ? Field->getType()
                   : Param ? Param->getType()
                           : QualType();
    std::string Text = exprText(Ctx, A);
    if (!Param || Ptr.isNull() || !Ptr->isPointerType()) {
      fail("access '" + Text +
           "' is not through a pointer parameter or a pointer member of "
           "a struct parameter passed by value");
      return false;
    }
    if (Plan.KeepBlocks && !refersTo(A->getIdx(), M.Index))
      return blockRead(A, Write, Text,
                       {Param->getFunctionScopeIndex(),
                        Field ? Field->getFieldIndex() + 1 : 0});
    if (!refersTo(A->getIdx(), M.Index))
      return laneRead(A, Read, Write, Text,
                      {Param->getFunctionScopeIndex(),
                       Field ? Field->getFieldIndex() + 1 : 0});
    QualType T = Ptr->getPointeeType();
    bool Dependent = T->isDependentType();
    std::string Name = exprText(Ctx, cast<Expr>(A->getBase()));
    if (Dependent && Field) {
      fail("the element type of '" + Name + "' depends on template parameters");
      return false;
    }
    auto Form = Dependent ? std::optional<VectorForm>(VectorForm{})
                          : vectorForm(T, Ctx.AST);
    if (!Form) {
      fail("'" + Name + "' has element type '" +
           T.getUnqualifiedType().getAsString(Ctx.AST.getPrintingPolicy()) +
           "': only float, int, uint, short, ushort, char, uchar, double "
           "and __half have vector types here");
      return false;
    }
    if (T.isVolatileQualified()) {
      fail("'" + Name + "' is volatile");
      return false;
    }
    auto Span = fileSpan(Ctx.AST.getSourceManager(), Ctx.AST.getLangOpts(),
                         A->getSourceRange(), Ctx.file());
    if (!Span) {
      fail("access '" + Text + "' is written with a macro");
      return false;
    }
    ArrayKey Key{Param->getFunctionScopeIndex(),
                 Field ? Field->getFieldIndex() + 1 : 0};
    ArrayUse &U = Plan.Arrays[Key];
    U.Param = Param;
    U.Field = Field;
    U.Pointer = Ptr;
    U.Text = Name;
    U.Form = *Form;
    U.Dependent = Dependent;
    U.Read |= Read;
    U.Written |= Write;
    if (Write && !Plain)
      U.OnlyPlainWrites = false;
    Uses->push_back(
        {Span->Begin.Offset, Span->End.Offset - Span->Begin.Offset, Key});
    return true;
  }
  /// `bias[i % cols]`: a read at another index, kept as a scalar read in
  /// each lane's copy of the body, where the index names that lane's
  /// element. Only for arrays the body never writes (walkMapBody() checks
  /// once every access is known), at an index without side effects made of
  /// the element index, scalar parameters, the body's own locals and
  /// constants.
  bool laneRead(ArraySubscriptExpr *A, bool Read, bool Write, StringRef Text,
                ArrayKey Key) {
    std::string Why;
    if (Write || !Read)
      Why = "it is written";
    else if (A->getIdx()->HasSideEffects(Ctx.AST))
      Why = "its index has side effects";
    else if (const ValueDecl *V = foreignName(A->getIdx()))
      Why = "its index reads '" + V->getNameAsString() +
            "', which is neither the element index, a scalar parameter, a "
            "local of the body nor a constant";
    if (!Why.empty()) {
      fail("access '" + Text + "' is not at the thread's own element '" +
           M.IndexName + "' (" + Why + ")");
      return false;
    }
    Plan.LaneReads.insert(Key);
    return TraverseStmt(A->getIdx());
  }
  /// A variable \p E names that a lane's copy of the body could not
  /// recompute for its element, or null.
  const ValueDecl *foreignName(const Expr *E) const {
    // Parameters are the same in every lane; how a pointer parameter is
    // used inside the index (`lut[idx[i]]`: an access of its own) is
    // judged when the index is walked.
    const DeclRefExpr *R = findDeclRef(E, [&](const DeclRefExpr *DR) {
      const ValueDecl *D = DR->getDecl();
      const auto *V = dyn_cast<VarDecl>(D);
      return !(isa<EnumConstantDecl, FunctionDecl>(D) || D == M.Index ||
               (V && V->isUsableInConstantExpressions(Ctx.AST)) ||
               (isa_and_nonnull<ParmVarDecl>(V) &&
                !V->getType()->isReferenceType()) ||
               (V && V->isLocalVarDecl() && declaredInBody(V)));
    });
    return R ? R->getDecl() : nullptr;
  }
  bool declaredInBody(const VarDecl *V) const {
    SourceLocation L = V->getLocation();
    const SourceManager &SM = Ctx.AST.getSourceManager();
    return any_of(M.Body, [&](const Stmt *S) {
      return !SM.isBeforeInTranslationUnit(L, S->getBeginLoc()) &&
             SM.isBeforeInTranslationUnit(L, S->getEndLoc());
    });
  }
  /// `bias[blockIdx.x]` in the form that keeps the blocks: a read at an
  /// index that is the same for the whole block (keepBlockUniform()), kept
  /// as written in every lane.
  bool blockRead(ArraySubscriptExpr *A, bool Write, StringRef Text,
                 ArrayKey Key) {
    if (!Write && keepBlockUniform(Ctx, A->getIdx(), M.Index)) {
      Plan.BlockReads.insert(Key);
      return true;
    }
    fail("access '" + Text + "' is neither at the thread's own element '" +
         M.IndexName +
         "' nor a read at an index the same for the whole block (made of "
         "parameters, constants, blockIdx and gridDim)");
    return false;
  }
  // The form that keeps the blocks: blockDim.x reads the original block.
  bool VisitMSPropertyRefExpr(MSPropertyRefExpr *E) {
    auto B = asBuiltinVar(E);
    if (!Plan.KeepBlocks || !B)
      return true;
    if (B->Var == "threadIdx") {
      fail("the body reads 'threadIdx." + std::string(1, B->Dim) +
           "', which may appear only in the index: each thread now runs "
           "the body for several elements");
      return false;
    }
    if (B->Var != "blockDim" || B->Dim != 'x')
      return true;
    auto Span = fileSpan(Ctx.AST.getSourceManager(), Ctx.AST.getLangOpts(),
                         E->getSourceRange(), Ctx.file());
    if (!Span) {
      fail("'blockDim.x' is written with a macro");
      return false;
    }
    if (Uses->empty() || Uses->back().Offset != Span->Begin.Offset)
      Uses->push_back({Span->Begin.Offset,
                       Span->End.Offset - Span->Begin.Offset, std::nullopt,
                       true});
    return true;
  }
  /// The struct parameter passed by value that \p E names, or null.
  static const ParmVarDecl *byValueStruct(const Expr *E) {
    const auto *P = dyn_cast_or_null<ParmVarDecl>(referencedDecl(E));
    return P && P->getType()->isRecordType() && !P->getType()->isDependentType()
               ? P
               : nullptr;
  }
  // `p.alpha` reads a scalar member; a pointer member is used only as
  // `p.x[i]` (access()).
  bool TraverseMemberExpr(MemberExpr *ME) {
    if (ME->isArrow() || !byValueStruct(ME->getBase()))
      return RecursiveASTVisitor::TraverseMemberExpr(ME);
    if (ME->getType()->isScalarType() && !ME->getType()->isPointerType())
      return true;
    fail("member '" + exprText(Ctx, ME) + "' is used other than as " +
         exprText(Ctx, ME) + "[" + M.IndexName + "]");
    return false;
  }
  // A helper that reads thread or block indices (or waits, shuffles)
  // would see one thread do several elements.
  bool VisitCallExpr(CallExpr *C) {
    const FunctionDecl *FD = C->getDirectCallee();
    // The CUDA headers' functions (atomics, math) are judged elsewhere:
    // an atomic needs an address, which access() refuses.
    if (FD && FD->getBody() &&
        !Ctx.AST.getSourceManager().isInSystemHeader(FD->getLocation()) &&
        readsThreadState(FD, 0)) {
      fail("the body calls '" + FD->getNameAsString() +
           "', which reads thread or block indices or works with other "
           "threads");
      return false;
    }
    return true;
  }
  static bool readsThreadState(const FunctionDecl *FD, unsigned Depth) {
    if (isThreadCall(FD->getName()))
      return true;
    const Stmt *Body = FD->getBody();
    if (!Body)
      return false;
    if (Depth > 4 || mentionsBuiltin(Body))
      return true;
    struct Calls : RecursiveASTVisitor<Calls> {
      unsigned Depth;
      bool Found = false;
      bool VisitCallExpr(CallExpr *C) {
        if (const FunctionDecl *F = C->getDirectCallee())
          Found |= readsThreadState(F, Depth + 1);
        return !Found;
      }
    } Inner{{}, Depth};
    Inner.TraverseStmt(const_cast<Stmt *>(Body));
    return Inner.Found;
  }
  bool pointerUse(UnaryOperator *U) {
    if (U->getOpcode() == UO_Deref)
      fail("access '" + exprText(Ctx, U) + "' is not of the form p[" +
           M.IndexName + "]");
    else
      fail("the body takes an address ('" + exprText(Ctx, U) + "')");
    return false;
  }
  bool VisitDeclRefExpr(DeclRefExpr *DR) {
    if (DR->getDecl() == M.Index) {
      auto Span = fileSpan(Ctx.AST.getSourceManager(), Ctx.AST.getLangOpts(),
                           DR->getSourceRange(), Ctx.file());
      if (!Span) {
        fail("the index is used inside a macro");
        return false;
      }
      Uses->push_back({Span->Begin.Offset,
                       Span->End.Offset - Span->Begin.Offset, std::nullopt});
    } else if (const auto *PV = dyn_cast<ParmVarDecl>(DR->getDecl());
               PV && PV->getType()->isPointerType()) {
      fail("pointer '" + PV->getName() + "' is used other than as " +
           PV->getName() + "[" + M.IndexName + "]");
      return false;
    } else if (const ParmVarDecl *SP = byValueStruct(DR);
               SP && holdsPointers(SP->getType(), 0)) {
      fail("the struct '" + SP->getName() +
           "', which holds pointers, is used other than through its "
           "members");
      return false;
    }
    return true;
  }
  static bool holdsPointers(QualType T, unsigned Depth) {
    T = T.getCanonicalType();
    while (const auto *AT = dyn_cast<ArrayType>(T.getTypePtr()))
      T = AT->getElementType().getCanonicalType();
    if (T->isPointerType() || T->isReferenceType() || Depth > 4)
      return true;
    const RecordDecl *RD = T->getAsRecordDecl();
    return RD && any_of(RD->fields(), [&](const FieldDecl *F) {
             return holdsPointers(F->getType(), Depth + 1);
           });
  }
  bool VisitDeclStmt(DeclStmt *) {
    Plan.NeedsScope = true;
    return true;
  }
};

} // namespace

std::string walkMapBody(const EditContext &Ctx, VectorizePlan &Plan) {
  MapWalker Walk(Ctx, Plan.Map, Plan);
  for (const Stmt *S : Plan.Map.Body) {
    Plan.Uses.emplace_back();
    Walk.Uses = &Plan.Uses.back();
    Walk.TopLevelAssign = isa<Expr>(S);
    if (!Walk.TraverseStmt(const_cast<Stmt *>(S)) || !Walk.Problem.empty())
      return Walk.Problem;
  }
  // A lane reading an element another lane's vector store writes would
  // see it before the store (the original's threads raced for it).
  for (const ArrayKey &K : Plan.LaneReads)
    if (auto It = Plan.Arrays.find(K);
        It != Plan.Arrays.end() && It->second.Written)
      return "'" + It->second.Text +
             "' is read at another element than the thread's own and "
             "written: a lane would read what another lane's store writes";
  if (Plan.Arrays.empty())
    return "no access is at the thread's own element '" + Plan.Map.IndexName +
           "': nothing to load or store as vectors";
  return "";
}

std::map<ArrayKey, std::string> vectorNames(const VectorizePlan &Plan,
                                            StringRef KText) {
  std::map<ArrayKey, std::string> Names;
  std::string Taken = KText.str();
  for (auto &[Key, U] : Plan.Arrays) {
    std::string Base =
        U.Field ? U.Field->getNameAsString() : U.Param->getNameAsString();
    Names[Key] = freshName(Taken, Base + "_v");
    Taken += " " + Names[Key];
  }
  return Names;
}

std::string vectorBody(
    const EditContext &Ctx, const VectorizePlan &Plan, int64_t W,
    const std::map<ArrayKey, std::string> &VecName, StringRef In,
    function_ref<std::pair<std::string, std::string>(const ArrayUse &)> At,
    function_ref<std::string(int64_t)> IndexAt) {
  static const char Comp[] = {'x', 'y', 'z', 'w'};
  std::string Out;
  auto Ref = [&](const ArrayUse &U, bool Const) {
    auto [Ptr, Sub] = At(U);
    return "reinterpret_cast<" + std::string(Const ? "const " : "") +
           U.Form.type(W) + " *>(" + Ptr + ")[" + Sub + "]";
  };
  for (auto &[Key, U] : Plan.Arrays) {
    std::string Decl = In.str() + U.Form.type(W) + " " + VecName.at(Key);
    if (U.Read || !U.OnlyPlainWrites)
      Out += Decl + " = " +
             Ref(U, U.Pointer->getPointeeType().isConstQualified()) + ";\n";
    else
      Out += Decl + ";\n";
  }
  const MapPattern &P = Plan.Map;
  std::string Target = Plan.NeedsScope ? In.str() + "  " : In.str();
  for (int64_t K = 0; K < W; ++K) {
    std::string Lane;
    for (size_t S = 0; S < P.Body.size(); ++S) {
      const SourceSpan &Span = P.BodySpans[S];
      std::vector<TextEdit> Edits;
      for (const BodyUse &U : Plan.Uses[S])
        Edits.push_back({U.Offset, U.Length,
                         U.BlockDim ? "(blockDim.x * " + std::to_string(W) + ")"
                         : U.Array  ? VecName.at(*U.Array) + "." + Comp[K]
                                    : IndexAt(K)});
      std::string Text = spliceText(Ctx.Code, Span.Begin.Offset,
                                    Span.End.Offset, std::move(Edits));
      int Col = int(indentationAt(Ctx.Code, Span.Begin.Offset).size());
      Lane += Target + reindent(Text, int(Target.size()) - Col) + "\n";
    }
    Out += Plan.NeedsScope ? In.str() + "{\n" + Lane + In.str() + "}\n" : Lane;
  }
  for (auto &[Key, U] : Plan.Arrays)
    if (U.Written)
      Out += In.str() + Ref(U, false) + " = " + VecName.at(Key) + ";\n";
  return Out;
}

namespace {

/// The arrays a plan vectorizes, as the kernel names them ("x, y").
std::string arrayNames(const VectorizePlan &P) {
  std::vector<std::string> Names;
  for (const auto &[Idx, U] : P.Arrays)
    Names.push_back(U.Text);
  return join(Names, ", ");
}

class VectorizeTransform : public Transform {
public:
  StringRef kind() const override { return "vectorize"; }
  StringRef description() const override {
    return "float2/float4 (int, uint, short, ushort, char, uchar; double2, "
           "__half2) "
           "loads and stores in map kernels, with a scalar tail and a scalar "
           "fallback for unaligned pointers";
  }
  TargetKind targetKind() const override { return TargetKind::Kernel; }
  std::vector<ParamSpec> params() const override {
    return {
        ParamSpec::integer("width", "elements per vector: 2 or 4", 2, 4, 4),
        // No declared default, so that an edit written without it reads
        // as before; absent, it is "stride".
        ParamSpec::string("blocks",
                          "stride (default): a grid-stride loop over vectors, "
                          "the grid divided; keep: every block keeps its "
                          "elements, the block divided (bodies that read "
                          "blockIdx.x, maps without a bounds guard)",
                          {"stride", "keep"})};
  }

  Applicability prepare(const EditContext &Ctx,
                        StringRef Target) const override {
    Applicability A;
    Edit E = defaultEdit(kind(), Target);
    auto Plan = planOrReason(A, analyze(Ctx, E));
    if (!Plan)
      return prepareKeep(Ctx, E, std::move(A));
    A.Reason = "map kernel: every global access is at the thread's own "
               "element (" +
               arrayNames(*Plan) + ")";
    if (!Plan->LaneReads.empty()) {
      std::vector<std::string> Names;
      for (const ArrayKey &K : Plan->LaneReads) {
        const FunctionDecl *FD = Plan->Kernel.Decl;
        const ParmVarDecl *P = FD->getParamDecl(K.first);
        std::string N = P->getNameAsString();
        if (K.second)
          if (const auto *RD = P->getType()->getAsRecordDecl())
            N += "." +
                 std::next(RD->field_begin(), K.second - 1)->getNameAsString();
        Names.push_back("'" + N + "'");
      }
      A.Reason = "map kernel: every global access is at the thread's own "
                 "element (" +
                 arrayNames(*Plan) +
                 ") or a read each element makes at "
                 "its own index (" +
                 join(Names, ", ") + ")";
    }
    if (Plan->Rows)
      A.Reason = rowMapReason(Ctx, *Plan->Rows, arrayNames(*Plan));
    if (!Plan->VectorInstantiations.empty()) {
      std::vector<std::string> Insts;
      for (const FunctionDecl *FD : Plan->VectorInstantiations)
        Insts.push_back(instantiationName(FD));
      A.Reason += "; vector path for " + join(Insts, ", ") +
                  ", other instantiations keep the scalar loop";
    }
    int64_t MaxWidth = 4;
    for (auto &[Idx, U] : Plan->Arrays)
      MaxWidth = std::min(MaxWidth, U.Form.MaxWidth);
    for (int64_t W : {4, 2}) {
      if (W > MaxWidth)
        continue;
      Edit S = E;
      S.Params["width"] = W;
      A.Suggestions.push_back(S);
    }
    return A;
  }

  Expected<tooling::Replacements> apply(const EditContext &Ctx,
                                        const Edit &E) const override {
    int64_t W = E.getInt("width").value_or(4);
    if (W != 2 && W != 4)
      return reject(E, "params", "width must be 2 or 4");
    std::string Blocks = E.getString("blocks").value_or("stride");
    if (Blocks != "stride" && Blocks != "keep")
      return reject(E, "params", "blocks must be \"stride\" or \"keep\"");
    bool Shaped = false;
    auto PlanOr =
        Blocks == "keep" ? analyzeKeepBlocks(Ctx, E, Shaped) : analyze(Ctx, E);
    if (!PlanOr)
      return PlanOr.takeError();
    VectorizePlan &Plan = *PlanOr;
    for (auto &[Idx, U] : Plan.Arrays)
      if (W > U.Form.MaxWidth)
        return reject(E, "not-applicable",
                      "kernel '" + E.Target + "': '" + U.Text +
                          "' has element type '" + U.Form.Prefix +
                          "', whose vector type " +
                          U.Form.type(U.Form.MaxWidth) + " holds " +
                          Twine(U.Form.MaxWidth) + " elements; use width " +
                          Twine(U.Form.MaxWidth));
    if (Plan.Rows)
      return applyRows(Ctx, E, *Plan.Rows, W);
    if (Plan.KeepBlocks)
      return applyKeepBlocks(Ctx, E, Plan, W);
    const MapPattern &P = Plan.Map;
    const std::string &I = P.Indent;
    std::string Wd = std::to_string(W);
    // Fresh names need only be new within the kernel.
    StringRef KText =
        StringRef(Ctx.Code).slice(Plan.Kernel.Info->Range.Begin.Offset,
                                  Plan.Kernel.Info->Range.End.Offset);
    std::string Tid = freshName(KText, "tid");
    std::string V = freshName(KText, "v");
    std::string Stride = " += blockDim.x * gridDim.x";
    // A bound written with a macro is one expression as the guard reads
    // it; parenthesized, it is one here too (`#define N 1000 + 3`).
    std::string Bound =
        containsMacro(P.Bound) ? "(" + P.BoundText + ")" : P.BoundText;
    std::string N = parenthesize(Bound);
    std::map<ArrayKey, std::string> VecName = vectorNames(Plan, KText);
    std::vector<std::string> Aligned;
    for (auto &[Key, U] : Plan.Arrays)
      Aligned.push_back("reinterpret_cast<unsigned long long>(" + U.Text +
                        ") % " + std::to_string(W * U.Form.Bytes) + " == 0");

    std::string Out = "if (" + join(Aligned, " &&\n" + I + "    ") + ") {\n";
    std::string In2 = I + "  ", In3 = I + "    ";
    Out += In2 + "for (" + P.IndexType + " " + V + " = " + Tid + "; " + V +
           " < " + N + " / " + Wd + "; " + V + Stride + ") {\n";
    Out += vectorBody(
        Ctx, Plan, W, VecName, In3,
        [&](const ArrayUse &U) { return std::make_pair(U.Text, V); },
        [&](int64_t K) {
          return "(" + V + " * " + Wd + " + " + std::to_string(K) + ")";
        });
    Out += In2 + "}\n";
    std::string Body2 = reindent(P.BodyBlock, 2);
    Out += In2 + "for (" + P.IndexType + " " + P.IndexName + " = " + N + " / " +
           Wd + " * " + Wd + " + " + Tid + "; " + P.IndexName + " < " + Bound +
           "; " + P.IndexName + Stride + ") " + Body2 + "\n";
    std::string Scalar = "for (" + P.IndexType + " " + P.IndexName + " = " +
                         Tid + "; " + P.IndexName + " < " + Bound + "; " +
                         P.IndexName + Stride + ") " + Body2;
    Out += I + "} else {\n" + In2 + Scalar + "\n" + I + "}";
    // Other element types of a template keep the scalar grid-stride loop.
    if (!Plan.TypeGuards.empty())
      Out = "if constexpr (" + join(Plan.TypeGuards, " &&\n" + I + "    ") +
            ") {\n" + In2 + reindent(Out, 2) + "\n" + I + "} else {\n" + In2 +
            Scalar + "\n" + I + "}";
    Out = P.IndexType + " " + Tid + " = " + P.InitText + ";\n" + I + Out;

    tooling::Replacements R;
    SourceSpan S{{0, 0, P.RegionBegin}, {0, 0, P.RegionEnd}};
    if (Error Err = addReplacement(R, replaceSpan(Ctx, S, Out), E))
      return std::move(Err);
    for (const GridExpr &G : Plan.Grids)
      if (Error Err = addReplacement(
              R, replaceSpan(Ctx, G.Span, ceilDivGridText(Ctx, G, W)), E))
        return std::move(Err);
    for (const auto &[Span, Name] : Plan.GridVars)
      if (Error Err = addReplacement(R,
                                     replaceSpan(Ctx, Span,
                                                 "dim3((" + Name + ".x + " +
                                                     std::to_string(W - 1) +
                                                     ") / " + Wd + ")"),
                                     E))
        return std::move(Err);
    return R;
  }

private:
  /// prepare() when the grid-stride form is refused (\p A): the form that
  /// keeps the blocks when the kernel has its shape and reads its block.
  static Applicability prepareKeep(const EditContext &Ctx, const Edit &E,
                                   Applicability A) {
    bool Shaped = false;
    auto Plan = analyzeKeepBlocks(Ctx, E, Shaped);
    if (!Shaped) {
      consumeError(Plan.takeError());
      return A;
    }
    Applicability K;
    auto Kept = planOrReason(K, std::move(Plan));
    if (!Kept)
      return K;
    std::vector<int64_t> Widths = keepBlocksWidths(*Kept);
    K.Reason =
        std::string(Kept->Map.Guard ? "map kernel that reads its block"
                                    : "map kernel without a bounds guard (its "
                                      "grid is all elements)") +
        ": every block keeps its elements, its threads take W "
        "consecutive ones (" +
        arrayNames(*Kept) + ")";
    if (!Kept->VectorInstantiations.empty()) {
      std::vector<std::string> Insts;
      for (const FunctionDecl *FD : Kept->VectorInstantiations)
        Insts.push_back(instantiationName(FD));
      K.Reason += "; vector path for " + join(Insts, ", ") +
                  ", other instantiations take their elements one by one";
    }
    if (Widths.empty())
      K.Reason += "; no width leaves every launch's block at least 32 "
                  "threads, so none is suggested";
    for (int64_t W : Widths) {
      Edit S = E;
      S.Params["width"] = W;
      S.Params["blocks"] = std::string("keep");
      K.Suggestions.push_back(S);
    }
    return K;
  }

  /// The rewrite of a 2D map along matrix rows (rowMapText).
  static Expected<tooling::Replacements>
  applyRows(const EditContext &Ctx, const Edit &E, const RowMap &M, int64_t W) {
    std::string Wd = std::to_string(W);
    // Fresh names are new in the whole file (the kernel's range is not at
    // hand here).
    StringRef KText = Ctx.Code;
    tooling::Replacements R;
    auto InitSp = looseExprSpan(Ctx, M.Col->getInit());
    auto First = stmtSpan(Ctx, M.Body.front());
    auto Last = stmtSpan(Ctx, M.Body.back());
    if (!InitSp || !First || !Last)
      return reject(E, "macro", "the 2D map is written with a macro");
    if (Error Err = addReplacement(
            R,
            replaceSpan(Ctx, *InitSp,
                        "(" + exprText(Ctx, M.Col->getInit()) + ") * " + Wd),
            E))
      return std::move(Err);
    SourceSpan Body = offsetSpan(First->Begin.Offset, Last->End.Offset);
    if (Error Err = addReplacement(
            R, replaceSpan(Ctx, Body, rowMapText(Ctx, M, W, KText)), E))
      return std::move(Err);
    for (const RowMap::Grid &G : M.Grids)
      if (Error Err = addReplacement(R,
                                     replaceSpan(Ctx, G.Span,
                                                 G.Before + "(" + G.X + " + " +
                                                     std::to_string(W - 1) +
                                                     ") / " + Wd + G.After),
                                     E))
        return std::move(Err);
    return R;
  }

  /// A kernel with 2D indices: the map along matrix rows
  /// (VectorizeRows.cpp), or the reason.
  static Expected<VectorizePlan>
  analyzeRows(const EditContext &Ctx, const Edit &E, VectorizePlan Plan) {
    auto No = [&](const Twine &Why) {
      return reject(E, "not-applicable", "kernel '" + E.Target + "': " + Why);
    };
    RowMap M;
    bool Shape = false;
    std::string Why = matchRowMap(Ctx, Plan.Kernel.Decl, M, Shape);
    if (!Shape)
      return No("uses 2D thread or block indices; vectorize handles "
                "one-dimensional map kernels");
    if (Why.empty())
      Why = rowBodyProblem(Ctx, M);
    if (Why.empty() &&
        (exprText(Ctx, M.ColBound).empty() || exprText(Ctx, M.Stride).empty() ||
         exprText(Ctx, M.Col->getInit()).empty()))
      Why = "the column index, its bound or the row length is written "
            "with a macro";
    if (Why.empty())
      Why = rowGrids(Ctx, *Plan.Kernel.Info, M);
    if (!Why.empty())
      return No(Why);
    for (const auto &[V, P] : M.Ptrs) {
      ArrayUse &U = Plan.Arrays[{P.Matrix->getFunctionScopeIndex(), 0}];
      U.Param = P.Matrix;
      U.Pointer = P.Matrix->getType();
      U.Text = P.Matrix->getNameAsString();
      U.Form = P.Form;
    }
    Plan.Rows = std::move(M);
    return Plan;
  }

  Expected<VectorizePlan> analyze(const EditContext &Ctx, const Edit &E) const {
    auto K = resolveKernel(Ctx, E, E.Target);
    if (!K)
      return K.takeError();
    VectorizePlan Plan;
    Plan.Kernel = *K;
    auto No = [&](const Twine &Why) {
      return reject(E, "not-applicable", "kernel '" + E.Target + "': " + Why);
    };
    if (K->Info->Uses2DThreads)
      return analyzeRows(Ctx, E, std::move(Plan));
    std::string Why;
    auto P = matchMapPattern(Ctx, K->Decl, Why, /*IndexByMeaning=*/true,
                             /*ConstantMacros=*/true);
    if (!P)
      return No(Why);
    if (std::string Problem = elementwiseBodyProblem(Ctx, *P); !Problem.empty())
      return No(Problem);
    Plan.Map = std::move(*P);
    const MapPattern &M = Plan.Map;

    if (std::string Why = walkMapBody(Ctx, Plan); !Why.empty())
      return No(Why);
    if (Plan.Arrays.empty())
      return No("the body accesses no global array at '" + M.IndexName + "'");
    if (std::string Why = outsideWriteProblem(Ctx, M.Body, M.Index);
        !Why.empty())
      return No(Why);
    if (std::string Problem = resolveDependentTypes(Ctx, Plan);
        !Problem.empty())
      return No(Problem);
    for (const LaunchSite &L : K->Info->Launches) {
      std::string WhyNot;
      if (!launchesVectorPath(Ctx, Plan, L))
        continue;
      // The divided grid `(G + W - 1) / W` (ceilDivGridText()) evaluates G
      // once, as the launch did, so G may call a helper: coverageProblem()
      // below accepts a grid only as ceil(bound / block), through a helper
      // only when its body is `return (a + b - 1) / b;` (`ceil_div(n,
      // 256)`, which clang counts as a side effect), and ceil(ceil(n / B) /
      // W) = ceil(n / (B * W)) gives one vector per thread. G + W - 1 is
      // computed in G's type: an unsigned G that wraps was more than 2^31 - 1
      // blocks (the most a launch takes), which do not launch, and becomes
      // 0 blocks, which do not either; a 64-bit G does not come near 2^63;
      // an int G overflows only within W - 1 of 2^31 - 1 blocks, which
      // ceil(n / B) of an int n reaches only with B = 1 (not excluded here).
      auto G = grid1D(Ctx, L, WhyNot);
      if (!G)
        if (auto Var = gridVariable(Ctx, L)) {
          Plan.GridVars.push_back(*Var);
          continue;
        }
      if (!G)
        return No(WhyNot + "; vectorize divides the grid of every launch by "
                           "the width (left as it is, most threads would "
                           "find no work)");
      Plan.Grids.push_back(*G);
    }
    if (std::string Why = coverageProblem(*K->Info, M.Bound, M.BoundText, Ctx);
        !Why.empty())
      return No(Why);
    return Plan;
  }

  /// (gridCoverageProblem()): the rewrite's grid-stride loops handle every
  /// element below the bound whatever the grid, the original only those
  /// its threads reach. "" when every launch is shown to cover it.
  static std::string coverageProblem(const KernelInfo &K, const Expr *Bound,
                                     StringRef BoundText,
                                     const EditContext &Ctx) {
    if (K.Launches.empty())
      return "it is never launched in this file, so no grid can be shown to "
             "cover the guard's bound '" +
             BoundText.str() + "'";
    for (const LaunchSite &L : K.Launches)
      if (std::string Why = gridCoverageProblem(Ctx, L, Bound, 0); !Why.empty())
        return "launch " + L.Id +
               " is not shown to run a thread for every "
               "element below the guard's bound '" +
               BoundText.str() + "': " + Why +
               "; the vector loops handle every element below the bound "
               "whatever the grid, so an original grid that stops short "
               "would have elements written that it never wrote";
    return "";
  }

  /// The grid of \p L when it is a local `dim3` variable of one dimension
  /// (its y and z are 1) not written after its declaration: the span the
  /// launch names it with and that name.
  static std::optional<std::pair<SourceSpan, std::string>>
  gridVariable(const EditContext &Ctx, const LaunchSite &L) {
    const CUDAKernelCallExpr *Call = findLaunchCall(Ctx, L);
    if ((L.InMacro && !L.GridInPlace) || !Call || !Call->getConfig() ||
        Call->getConfig()->getNumArgs() < 1)
      return std::nullopt;
    const Expr *G = Call->getConfig()->getArg(0)->IgnoreImplicit();
    if (const auto *C = dyn_cast<CXXConstructExpr>(G);
        C && C->getNumArgs() == 1 &&
        C->getConstructor()->isCopyOrMoveConstructor())
      G = C->getArg(0)->IgnoreImplicit();
    const auto *Ref = dyn_cast<DeclRefExpr>(G->IgnoreParens());
    const auto *V = Ref ? dyn_cast<VarDecl>(Ref->getDecl()) : nullptr;
    const auto *Fn = V ? dyn_cast<FunctionDecl>(V->getDeclContext()) : nullptr;
    const auto *Init =
        V && V->isLocalVarDecl() && V->getInit()
            ? dyn_cast<CXXConstructExpr>(V->getInit()->IgnoreImplicit())
            : nullptr;
    if (!Init || !Fn || !Fn->getBody() || Init->getNumArgs() != 3 ||
        V->getType()->getAsCXXRecordDecl() == nullptr ||
        V->getType()->getAsCXXRecordDecl()->getName() != "dim3" ||
        (!V->getType().isConstQualified() &&
         writtenVars(Fn->getBody()).contains(V)))
      return std::nullopt;
    for (unsigned D = 1; D < 3; ++D) {
      const Expr *A = Init->getArg(D);
      if (const auto *DA = dyn_cast<CXXDefaultArgExpr>(A))
        A = DA->getExpr();
      if (intValue(A, Ctx.AST) != 1)
        return std::nullopt;
    }
    auto Span = spelledSpan(Ctx, Ref);
    if (!Span)
      return std::nullopt;
    return std::make_pair(*Span, V->getNameAsString());
  }

  /// Whether launch \p L runs the vector path: every launch of a kernel
  /// without dependent element types; in a template, a launch of one of
  /// the instantiations the vector path is written for.
  static bool launchesVectorPath(const EditContext &Ctx,
                                 const VectorizePlan &Plan,
                                 const LaunchSite &L) {
    if (Plan.TypeGuards.empty())
      return true;
    const CUDAKernelCallExpr *Call = findLaunchCall(Ctx, L);
    const FunctionDecl *Callee = Call ? Call->getDirectCallee() : nullptr;
    return Callee &&
           any_of(Plan.VectorInstantiations, [&](const FunctionDecl *FD) {
             return FD->getCanonicalDecl() == Callee->getCanonicalDecl();
           });
  }
};

} // namespace

/// The element types of arrays whose types depend on template parameters,
/// from the instantiations: those of the first one whose arrays all have
/// vector types, one without double arrays first. Fills the plan's
/// guards; the problem otherwise.
std::string resolveDependentTypes(const EditContext &Ctx, VectorizePlan &Plan) {
  if (none_of(Plan.Arrays, [](auto &A) { return A.second.Dependent; }))
    return "";
  std::vector<const FunctionDecl *> Insts =
      templateInstantiations(Plan.Kernel.Decl);
  if (Insts.empty())
    return "the element types of its arrays depend on template parameters "
           "and the template is never instantiated in this file, so they "
           "are unknown";
  // The concrete element type of each dependent array, per instantiation.
  auto TypesIn = [&](const FunctionDecl *Inst) {
    std::vector<QualType> Types;
    for (auto &[Idx, U] : Plan.Arrays)
      if (U.Dependent) {
        const ParmVarDecl *P = instantiatedParam(U.Param, Inst);
        Types.push_back(P ? P->getType()->getPointeeType().getCanonicalType()
                          : QualType());
      }
    return Types;
  };
  // double2 holds two elements: an instantiation with a double array
  // takes the vector path only when no other one can.
  std::vector<const FunctionDecl *> Order = Insts;
  std::stable_partition(
      Order.begin(), Order.end(), [&](const FunctionDecl *Inst) {
        return none_of(TypesIn(Inst), [](QualType T) {
          return !T.isNull() && T->isSpecificBuiltinType(BuiltinType::Double);
        });
      });
  std::vector<std::string> Refused;
  for (const FunctionDecl *Inst : Order) {
    std::vector<QualType> Types = TypesIn(Inst);
    size_t K = 0;
    std::string Problem;
    for (auto &[Idx, U] : Plan.Arrays) {
      if (!U.Dependent)
        continue;
      QualType T = Types[K++];
      if (T.isNull()) {
        Problem = "the parameters of '" + U.Param->getName().str() +
                  "' cannot be matched (a parameter pack)";
        break;
      }
      if (!vectorForm(T, Ctx.AST) || T.isVolatileQualified()) {
        Problem = "'" + U.Param->getName().str() + "' has element type '" +
                  T.getAsString(Ctx.AST.getPrintingPolicy()) + "'";
        if (T.isVolatileQualified())
          Problem += ", which is volatile";
        break;
      }
    }
    if (!Problem.empty()) {
      Refused.push_back(instantiationName(Inst) + ": " + Problem);
      continue;
    }
    K = 0;
    for (auto &[Idx, U] : Plan.Arrays) {
      if (!U.Dependent)
        continue;
      QualType T = Types[K++];
      U.Form = *vectorForm(T, Ctx.AST);
      std::string Guard =
          "std::is_same<" +
          typeName(U.Param->getType()->getPointeeType(), Ctx.AST) + ", " +
          typeName(T, Ctx.AST) + ">::value";
      if (!is_contained(Plan.TypeGuards, Guard))
        Plan.TypeGuards.push_back(Guard);
    }
    for (const FunctionDecl *Other : Insts)
      if (TypesIn(Other) == Types)
        Plan.VectorInstantiations.push_back(Other);
    return "";
  }
  return "no instantiation has vector element types in every array (" +
         join(Refused, "; ") +
         "): only float, int, uint, short, ushort, char, uchar, double and "
         "__half have vector types here";
}

std::unique_ptr<Transform> createVectorizeTransform() {
  return std::make_unique<VectorizeTransform>();
}

} // namespace optiml
