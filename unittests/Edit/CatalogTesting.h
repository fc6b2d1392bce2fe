//===- CatalogTesting.h - Before/after tests for catalog transforms -*- C++
//-*-===//
//
// Parses a CUDA source string against the hermetic mock header, runs a
// transform's prepare() or apply(), applies the replacements and re-parses
// the result (which must have no errors).
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_UNITTESTS_EDIT_CATALOGTESTING_H
#define OPTIML_UNITTESTS_EDIT_CATALOGTESTING_H

#include "CatalogInternal.h"
#include "optiml/Frontend/ModelBuilder.h"
#include "optiml/Frontend/Parse.h"
#include "clang/Frontend/ASTUnit.h"
#include "clang/Tooling/Core/Replacement.h"
#include "gtest/gtest.h"
#include <string>

namespace optiml {
namespace testing_catalog {

inline const ParseConfig &testConfig() {
  static ParseConfig Config = [] {
    ParseConfig C;
    ToolchainOptions O;
    O.ResourceDir = OPTIML_TEST_RESOURCE_DIR;
    auto T = discoverToolchain(O);
    if (!T) {
      llvm::consumeError(T.takeError());
      C.Tools.CudaPath = "/usr/local/cuda";
      C.Tools.GpuArch = "sm_90";
      C.Tools.ResourceDir = OPTIML_TEST_RESOURCE_DIR;
    } else {
      C.Tools = *T;
    }
    C.ExtraArgs = {"-nocudainc", "-nocudalib",
                   std::string("-I") + OPTIML_TEST_INPUTS};
    return C;
  }();
  return Config;
}

inline std::string testFile() {
  return std::string(OPTIML_TEST_INPUTS) + "/catalog-unit.cu";
}

/// A parsed input with its model, ready for prepare()/apply().
struct Input {
  std::string Code;
  ParsedTU TU;
  KernelModel Model;
  std::string FileName = testFile();
  std::unique_ptr<EditContext> Ctx;

  explicit Input(std::string Source)
      : Code("#include \"cuda_mock.h\"\n" + std::move(Source)) {
    auto P = parseCuda(Code, FileName, testConfig(), CudaSide::Host);
    if (!P) {
      ADD_FAILURE() << llvm::toString(P.takeError());
      return;
    }
    TU = std::move(*P);
    for (const Diagnostic &D : TU.Diags)
      if (D.isError())
        ADD_FAILURE() << "input does not parse: " << D.str();
    Model = buildKernelModel(TU.AST->getASTContext());
    Ctx.reset(new EditContext{FileName, Code, Model, TU.AST->getASTContext(),
                              testConfig()});
  }
};

/// Errors of the host and device parses of \p Code ("" when none).
inline std::string parseErrors(const std::string &Code) {
  std::string Out;
  for (CudaSide Side : {CudaSide::Host, CudaSide::Device}) {
    auto P = parseCuda(Code, testFile(), testConfig(), Side);
    if (!P)
      return llvm::toString(P.takeError());
    for (const Diagnostic &D : P->Diags)
      if (D.isError())
        Out += D.str() + "\n";
  }
  return Out;
}

inline Edit makeEdit(llvm::StringRef Kind, llvm::StringRef Target,
                     std::map<std::string, ParamValue> Params = {}) {
  Edit E;
  E.Kind = Kind.str();
  E.Target = Target.str();
  E.Params = std::move(Params);
  return E;
}

/// The transformed source (without the mock include line), or
/// "error: <message>" when apply() refused. Fails the test when the result
/// does not parse.
inline std::string applyTo(const Transform &T, const std::string &Source,
                           const Edit &E) {
  Input In(Source);
  if (!In.Ctx)
    return "error: no input";
  auto R = T.apply(*In.Ctx, E);
  if (!R)
    return "error: " + llvm::toString(R.takeError());
  auto Out = clang::tooling::applyAllReplacements(In.Code, *R);
  if (!Out)
    return "error: " + llvm::toString(Out.takeError());
  std::string Errors = parseErrors(*Out);
  EXPECT_EQ(Errors, "") << *Out;
  return Out->substr(Out->find('\n') + 1);
}

inline Applicability prepareOn(const Transform &T, const std::string &Source,
                               llvm::StringRef Target) {
  Input In(Source);
  if (!In.Ctx)
    return {};
  return T.prepare(*In.Ctx, Target);
}

} // namespace testing_catalog
} // namespace optiml

#endif
