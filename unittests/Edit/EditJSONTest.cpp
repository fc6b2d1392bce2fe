//===- EditJSONTest.cpp - Parsing, validation and schema of edits ---------===//

#include "optiml/Edit/EditJSON.h"
#include "optiml/Edit/Transform.h"
#include "gtest/gtest.h"

using namespace optiml;

namespace {

std::string errorOf(llvm::StringRef JSON) {
  auto E = parseEdits(JSON);
  if (E)
    return "";
  return llvm::toString(E.takeError());
}

TEST(ParamSpecTest, ConstructorsSetTypeRangeChoicesAndDefault) {
  ParamSpec I = ParamSpec::integer("tile", "edge", 8, 64, 32);
  EXPECT_EQ(I.ParamType, ParamSpec::Int);
  EXPECT_EQ(I.Name, "tile");
  EXPECT_EQ(I.Description, "edge");
  EXPECT_EQ(I.Min, 8);
  EXPECT_EQ(I.Max, 64);
  ASSERT_TRUE(I.Default);
  EXPECT_EQ(std::get<int64_t>(*I.Default), 32);
  EXPECT_FALSE(I.Required);
  EXPECT_FALSE(ParamSpec::integer("n", "", 1, 2).Default);
  EXPECT_TRUE(ParamSpec::integer("n", "", 1, 2).required().Required);

  ParamSpec B = ParamSpec::boolean("loads", "also loads", true);
  EXPECT_EQ(B.ParamType, ParamSpec::Bool);
  ASSERT_TRUE(B.Default);
  EXPECT_TRUE(std::get<bool>(*B.Default));
  EXPECT_FALSE(B.Min);
  EXPECT_FALSE(ParamSpec::boolean("x", "").Default);

  ParamSpec S = ParamSpec::string("per", "owner", {"warp", "block"}, "warp");
  EXPECT_EQ(S.ParamType, ParamSpec::String);
  EXPECT_EQ(S.Choices, (std::vector<std::string>{"warp", "block"}));
  ASSERT_TRUE(S.Default);
  EXPECT_EQ(std::get<std::string>(*S.Default), "warp");
  EXPECT_TRUE(ParamSpec::string("code", "").Choices.empty());

  ParamSpec L = ParamSpec::stringList("functions", "which", {"expf"});
  EXPECT_EQ(L.ParamType, ParamSpec::StringList);
  EXPECT_EQ(L.Choices, (std::vector<std::string>{"expf"}));
  EXPECT_FALSE(L.Default);
}

TEST(EditJSON, ParsesOneEditWithTypedParams) {
  auto E = parseEdit(
      R"({"kind":"unroll","target":"k/loop0","params":{"factor":4}})");
  ASSERT_TRUE(bool(E)) << llvm::toString(E.takeError());
  EXPECT_EQ(E->Kind, "unroll");
  EXPECT_EQ(E->Target, "k/loop0");
  EXPECT_EQ(E->getInt("factor"), 4);
  EXPECT_FALSE(E->getString("factor"));
}

TEST(EditJSON, ParsesAListInOrderAndFillsDefaults) {
  auto L = parseEdits(R"([{"kind":"fast-math","target":"a"},
                          {"kind":"restrict-const","target":"b"}])");
  ASSERT_TRUE(bool(L)) << llvm::toString(L.takeError());
  ASSERT_EQ(L->size(), 2u);
  EXPECT_EQ((*L)[0].Kind, "fast-math");
  EXPECT_FALSE((*L)[1].getBool("restrict")); // absent: added only if provable
  EXPECT_EQ((*L)[1].getBool("const"), true);
}

TEST(EditJSON, ErrorsNameTheField) {
  EXPECT_EQ(
      errorOf(
          R"({"kind":"unroll","target":"k/loop0","params":{"factor":true}})"),
      "edit.params.factor: expected an integer, got a boolean");
  EXPECT_EQ(
      errorOf(
          R"([{"kind":"unroll","target":"k/loop0"},{"kind":"x","target":"k"}])")
          .substr(0, 35),
      "edits[1].kind: unknown edit kind 'x");
  EXPECT_EQ(errorOf(R"({"kind":"unroll","target":""})"),
            "edit.target: is empty");
  EXPECT_EQ(errorOf(R"({"kind":"unroll","target":"k/loop0","params":[]})"),
            "edit.params: expected an object, got an array");
  EXPECT_EQ(errorOf(R"({"kind":"launch-bounds","target":"k"})"),
            "edit.params: missing required parameter 'max_threads' (most "
            "threads per block any launch uses)");
  EXPECT_EQ(
      errorOf(
          R"({"kind":"unroll","target":"k/loop0","params":{"factor":18446744073709551615}})"),
      "edit.params.factor: integer out of range");
  EXPECT_NE(errorOf("\xff"), "");
  EXPECT_NE(errorOf(""), "");
  EXPECT_NE(errorOf("null"), "");
}

TEST(EditJSON, ValidatesTargetsAgainstTheModel) {
  KernelModel M;
  KernelInfo K;
  K.QualifiedName = "ns::k";
  LoopInfo L;
  L.Id = "ns::k/loop0";
  K.Loops.push_back(L);
  M.Kernels.push_back(K);
  Edit E{"unroll", "ns::k/loop0", {}};
  EXPECT_FALSE(bool(validateTarget(E, M)));
  E.Target = "ns::k/loop1";
  llvm::Error Err = validateTarget(E, M);
  ASSERT_TRUE(bool(Err));
  EXPECT_EQ(llvm::toString(std::move(Err)),
            "edit.target: no loop 'ns::k/loop1' (unroll targets a loop id "
            "(<kernel>/loop<N>); loops: ns::k/loop0)");
  Edit F{"fast-math", "k", {}};
  Err = validateTarget(F, M);
  ASSERT_TRUE(bool(Err));
  EXPECT_NE(llvm::toString(std::move(Err)).find("kernels: ns::k"),
            std::string::npos);
}

TEST(EditJSON, RoundTrips) {
  const char *Doc =
      R"({"kind":"replace-function","target":"k","params":{"code":"__global__ void k() {}\n","changes_precision":true}})";
  auto E = parseEdit(Doc);
  ASSERT_TRUE(bool(E)) << llvm::toString(E.takeError());
  std::string Once = editToJSON(*E);
  auto Again = parseEdit(Once);
  ASSERT_TRUE(bool(Again)) << llvm::toString(Again.takeError());
  EXPECT_EQ(editToJSON(*Again), Once);
  EXPECT_EQ(Again->getString("code"), "__global__ void k() {}\n");
}

TEST(EditJSON, SchemaListsEveryKind) {
  std::string S = editJSONSchema();
  for (const auto &T : allTransforms())
    EXPECT_NE(S.find("\"const\": \"" + T->kind().str() + "\""),
              std::string::npos)
        << T->kind().str();
  EXPECT_NE(S.find("\"additionalProperties\": false"), std::string::npos);
}

TEST(EditJSON, RejectionsAreData) {
  EditRejected R("unroll", "k/loop0",
                 {{"macro", "k.cu", 3, 5, "inside a macro"},
                  {"scope", "", 0, 0, "outside"}});
  R.ListIndex = 2;
  EXPECT_EQ(
      R.message(),
      "edits[2] unroll k/loop0 rejected: k.cu:3:5: [macro] inside a macro");
  std::string J = rejectionToJSON(R);
  EXPECT_NE(J.find("\"check\": \"macro\""), std::string::npos);
  EXPECT_NE(J.find("\"index\": 2"), std::string::npos);
}

} // namespace
