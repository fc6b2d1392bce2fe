//===- Catalog.cpp - The registry of transforms and shared helpers --------===//

#include "CatalogInternal.h"
#include "optiml/Frontend/ModelBuilder.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace optiml {

static std::vector<std::unique_ptr<Transform>> makeCatalog() {
  std::vector<std::unique_ptr<Transform>> C;
  // The catalog helper's transforms are commented out until their files are
  // listed in CMakeLists.txt; uncomment each line together with its file.
  // C.push_back(createLaunchConfigTransform());
  C.push_back(createLaunchBoundsTransform());
  C.push_back(createRestrictConstTransform());
  C.push_back(createUnrollTransform());
  // C.push_back(createGridStrideTransform());
  // C.push_back(createVectorizeTransform());
  C.push_back(createReadOnlyCacheTransform());
  C.push_back(createFastMathTransform());
  // C.push_back(createHoistTransform());
  // C.push_back(createSharedTilingTransform());
  // C.push_back(createWarpReduceTransform());
  // C.push_back(createCoarsenTransform());
  C.push_back(createCompileFlagsTransform());
  C.push_back(createReplaceFunctionTransform());
  C.push_back(createAddDeviceFunctionTransform());
  return C;
}

ArrayRef<std::unique_ptr<Transform>> allTransforms() {
  static const std::vector<std::unique_ptr<Transform>> Catalog = makeCatalog();
  return Catalog;
}

const Transform *findTransform(StringRef Kind) {
  for (const auto &T : allTransforms())
    if (T->kind() == Kind)
      return T.get();
  return nullptr;
}

std::string Transform::summary(const Edit &E) const {
  std::string S;
  raw_string_ostream OS(S);
  OS << E.Kind << " " << E.Target;
  for (const auto &[Name, V] : E.Params) {
    OS << " " << Name << "=";
    if (auto *I = std::get_if<int64_t>(&V))
      OS << *I;
    else if (auto *D = std::get_if<double>(&V))
      OS << *D;
    else if (auto *B = std::get_if<bool>(&V))
      OS << (*B ? "true" : "false");
    else if (auto *Str = std::get_if<std::string>(&V))
      OS << (Str->size() > 24 ? "<" + std::to_string(Str->size()) + " chars>"
                              : *Str);
    else if (auto *L = std::get_if<std::vector<std::string>>(&V))
      OS << join(*L, ",");
  }
  return S;
}

Error reject(const Edit &E, StringRef Check, const Twine &Message,
             SourcePos Pos) {
  CheckFailure F;
  F.Check = Check.str();
  F.Line = Pos.Line;
  F.Column = Pos.Column;
  F.Message = Message.str();
  return make_error<EditRejected>(E.Kind, E.Target,
                                  std::vector<CheckFailure>{std::move(F)});
}

StringRef kernelOfTarget(StringRef Target) {
  size_t Slash = Target.rfind('/');
  if (Slash == StringRef::npos)
    return Target;
  StringRef Tail = Target.substr(Slash + 1);
  if (Tail.starts_with("loop") || Tail.starts_with("launch"))
    return Target.substr(0, Slash);
  return Target;
}

static std::string kernelList(const KernelModel &M) {
  std::vector<std::string> Names;
  for (const KernelInfo &K : M.Kernels)
    Names.push_back("'" + K.QualifiedName + "'");
  if (Names.empty())
    return "the file has no kernels";
  return "kernels: " + join(Names, ", ");
}

Expected<ResolvedKernel> resolveKernel(const EditContext &Ctx, const Edit &E,
                                       StringRef Name) {
  ResolvedKernel R;
  R.Info = Ctx.Model.findKernel(Name.str());
  if (!R.Info)
    return reject(E, "target",
                  "no kernel named '" + Name + "' (" + kernelList(Ctx.Model) +
                      ")");
  R.Decl = findKernelDecl(Ctx.AST, Name);
  if (!R.Decl)
    return reject(E, "target",
                  "kernel '" + Name + "' has no definition in this file");
  return R;
}

Expected<ResolvedLoop> resolveLoop(const EditContext &Ctx, const Edit &E,
                                   StringRef Id) {
  ResolvedLoop R;
  StringRef KName = kernelOfTarget(Id);
  if (KName == Id)
    return reject(E, "target",
                  "'" + Id + "' is not a loop id (expected <kernel>/loop<N>)");
  auto K = resolveKernel(Ctx, E, KName);
  if (!K)
    return K.takeError();
  R.Kernel = *K;
  R.Info = Ctx.Model.findLoop(Id.str());
  if (!R.Info) {
    std::vector<std::string> Ids;
    for (const LoopInfo &L : K->Info->Loops)
      Ids.push_back("'" + L.Id + "'");
    return reject(E, "target",
                  "no loop '" + Id + "' in kernel '" + KName + "' (" +
                      (Ids.empty() ? std::string("it has no loops")
                                   : "loops: " + join(Ids, ", ")) +
                      ")");
  }
  R.S = findLoopStmt(K->Decl, Id.substr(KName.size() + 1));
  if (!R.S)
    R.S = findLoopStmt(K->Decl, Id);
  if (!R.S)
    return reject(E, "target", "loop '" + Id + "' was not found in the AST");
  return R;
}

Expected<ResolvedLaunch> resolveLaunch(const EditContext &Ctx, const Edit &E,
                                       StringRef Id) {
  ResolvedLaunch R;
  StringRef KName = kernelOfTarget(Id);
  if (KName == Id)
    return reject(E, "target",
                  "'" + Id +
                      "' is not a launch-site id (expected <kernel>/launch<N>)");
  auto K = resolveKernel(Ctx, E, KName);
  if (!K)
    return K.takeError();
  R.Kernel = *K;
  R.Info = Ctx.Model.findLaunch(Id.str());
  if (!R.Info) {
    std::vector<std::string> Ids;
    for (const LaunchSite &L : K->Info->Launches)
      Ids.push_back("'" + L.Id + "'");
    return reject(E, "target",
                  "no launch site '" + Id + "' (" +
                      (Ids.empty() ? "kernel '" + KName.str() +
                                         "' is never launched in this file"
                                   : "launch sites: " + join(Ids, ", ")) +
                      ")");
  }
  return R;
}

clang::tooling::Replacement replaceSpan(const EditContext &Ctx,
                                        const SourceSpan &S, StringRef Text) {
  return clang::tooling::Replacement(Ctx.FileName, S.Begin.Offset,
                                     S.End.Offset - S.Begin.Offset, Text);
}

clang::tooling::Replacement insertAt(const EditContext &Ctx, unsigned Offset,
                                     StringRef Text) {
  return clang::tooling::Replacement(Ctx.FileName, Offset, 0, Text);
}

Error addReplacement(clang::tooling::Replacements &Repls,
                     const clang::tooling::Replacement &R, const Edit &E) {
  if (Error Err = Repls.add(R))
    return reject(E, "internal",
                  "conflicting replacements: " + toString(std::move(Err)));
  return Error::success();
}

unsigned definitionBegin(const EditContext &Ctx,
                         const clang::FunctionDecl *FD) {
  const clang::SourceManager &SM = Ctx.AST.getSourceManager();
  clang::SourceLocation Loc = FD->getSourceRange().getBegin();
  if (const auto *T = FD->getDescribedFunctionTemplate())
    Loc = T->getSourceRange().getBegin();
  return SM.getFileOffset(SM.getExpansionLoc(Loc));
}

std::string indentationAt(StringRef Code, unsigned Offset) {
  size_t LineStart = Code.rfind('\n', Offset ? Offset - 1 : 0);
  LineStart = LineStart == StringRef::npos ? 0 : LineStart + 1;
  if (Offset == 0)
    LineStart = 0;
  size_t End = LineStart;
  while (End < Code.size() && (Code[End] == ' ' || Code[End] == '\t'))
    ++End;
  return Code.substr(LineStart, End - LineStart).str();
}

} // namespace optiml
