#include "optiml/Frontend/CMakeFileApi.h"
#include "optiml/Support/FileUtil.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"

using namespace optiml;
using namespace llvm;

namespace {

/// A build directory with a hand-written file API reply (what CMake 3.25
/// writes, trimmed to the fields read).
class CMakeFileApiTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(sys::fs::createUniqueDirectory("optiml-fileapi", Dir));
    put("CMakeCache.txt", "CMAKE_COMMAND:INTERNAL=/nonexistent/cmake\n");
  }
  void TearDown() override { (void)sys::fs::remove_directories(Dir); }
  void put(StringRef Rel, StringRef Text) {
    SmallString<256> P(Dir);
    sys::path::append(P, Rel);
    ASSERT_FALSE(sys::fs::create_directories(sys::path::parent_path(P)));
    ASSERT_FALSE(bool(writeFileAtomically(P, Text)));
  }
  void writeReply() {
    put(".cmake/api/v1/query/codemodel-v2", "");
    put(".cmake/api/v1/reply/index-2026-01-01T00-00-00-0000.json",
        R"({"reply": {"codemodel-v2": {"jsonFile": "codemodel-v2-1.json"}}})");
    put(".cmake/api/v1/reply/codemodel-v2-1.json",
        R"({"paths": {"source": "/src/proj", "build": "/b"},
            "configurations": [{"name": "Release", "targets": [
              {"name": "app", "jsonFile": "target-app.json"},
              {"name": "util", "jsonFile": "target-util.json"}]}]})");
    put(".cmake/api/v1/reply/target-app.json",
        R"({"name": "app", "type": "EXECUTABLE",
            "sources": [{"path": "src/main.cu", "compileGroupIndex": 0},
                        {"path": "src/k.cuh"},
                        {"path": "/abs/host.cpp", "compileGroupIndex": 1}],
            "compileGroups": [{"language": "CUDA"}, {"language": "CXX"}],
            "link": {"language": "CUDA", "commandFragments": [
              {"fragment": "-O3 -DNDEBUG", "role": "flags"},
              {"fragment": "", "role": "flags"},
              {"fragment": "libutil.a", "role": "libraries"},
              {"fragment": "-lcublas", "role": "libraries"},
              {"fragment": "-Wl,-rpath,/opt/lib", "role": "libraries"},
              {"fragment": "-Llib", "role": "libraryPath"},
              {"fragment": "\"/path with space/libx.so\"", "role": "libraries"}]}})");
    put(".cmake/api/v1/reply/target-util.json",
        R"({"name": "util", "type": "STATIC_LIBRARY", "sources": []})");
  }
  SmallString<256> Dir;
};

TEST_F(CMakeFileApiTest, ReadsSourcesAndLinkLine) {
  writeReply();
  auto T = readCMakeTarget(Dir, "app", /*Reconfigure=*/false);
  ASSERT_TRUE(bool(T)) << toString(T.takeError());
  EXPECT_EQ(T->Type, "EXECUTABLE");
  // The header listed in the target is not compiled: left out.
  ASSERT_EQ(T->Sources.size(), 2u);
  EXPECT_EQ(T->Sources[0].Path, "/src/proj/src/main.cu");
  EXPECT_EQ(T->Sources[0].Language, "CUDA");
  EXPECT_EQ(T->Sources[1].Path, "/abs/host.cpp");
  EXPECT_EQ(T->Sources[1].Language, "CXX");
  std::vector<std::string> Want = {
      std::string(Dir) + "/libutil.a", "-lcublas", "-Xlinker=-rpath,/opt/lib",
      "-L" + std::string(Dir) + "/lib", "/path with space/libx.so"};
  EXPECT_EQ(T->LinkFlags, Want);
  ASSERT_EQ(T->Notes.size(), 1u);
  EXPECT_EQ(T->Notes[0], "-O3 -DNDEBUG: not passed (link flags)");
}

TEST_F(CMakeFileApiTest, UnknownTargetListsTheTargets) {
  writeReply();
  auto T = readCMakeTarget(Dir, "ap", false);
  ASSERT_FALSE(bool(T));
  std::string Msg = toString(T.takeError());
  EXPECT_NE(Msg.find("no target 'ap'"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("(its targets: app, util)"), std::string::npos) << Msg;
}

TEST_F(CMakeFileApiTest, MissingReplyWritesTheQuery) {
  auto T = readCMakeTarget(Dir, "app", /*Reconfigure=*/false);
  ASSERT_FALSE(bool(T));
  consumeError(T.takeError());
  SmallString<256> Q(Dir);
  sys::path::append(Q, ".cmake", "api", "v1");
  sys::path::append(Q, "query", "codemodel-v2");
  EXPECT_TRUE(sys::fs::exists(Q));
  // With a re-run, the configured cmake is run once; here it cannot be.
  auto R = readCMakeTarget(Dir, "app", /*Reconfigure=*/true);
  ASSERT_FALSE(bool(R));
  consumeError(R.takeError());
}

TEST_F(CMakeFileApiTest, NotABuildDirectory) {
  auto T = readCMakeTarget("/nonexistent-build", "app", false);
  ASSERT_FALSE(bool(T));
  EXPECT_NE(toString(T.takeError()).find("is not a CMake build directory"),
            std::string::npos);
}

TEST_F(CMakeFileApiTest, DamagedReplyIsNamed) {
  writeReply();
  put(".cmake/api/v1/reply/target-app.json", "{not json");
  auto T = readCMakeTarget(Dir, "app", false);
  ASSERT_FALSE(bool(T));
  EXPECT_NE(toString(T.takeError()).find("target-app.json' is not valid JSON"),
            std::string::npos);
}

/// The reply is hostile input: every file of it that is not JSON, or not of
/// the expected shape, is an error that names the file and what is wrong.
TEST_F(CMakeFileApiTest, MalformedRepliesAreNamed) {
  const std::string Index =
      ".cmake/api/v1/reply/index-2026-01-01T00-00-00-0000.json";
  const std::string CodeModel = ".cmake/api/v1/reply/codemodel-v2-1.json";
  const std::string AppFile = ".cmake/api/v1/reply/target-app.json";
  struct Case {
    std::string File, Text, Want;
  };
  const std::string Incomplete = "CMake's file API reply is incomplete: no ";
  const Case Cases[] = {
      {Index, "", "index-2026-01-01T00-00-00-0000.json' is not valid JSON: "},
      {Index, R"({"reply": {"codemodel-v2": )",
       "index-2026-01-01T00-00-00-0000.json' is not valid JSON: parse error "
       "at line 1, column 28"},
      {Index, "[]", Incomplete + "codemodel-v2 reply in '"},
      {Index, R"({"reply": "codemodel-v2"})",
       Incomplete + "codemodel-v2 reply in '"},
      {Index, R"({"reply": {"codemodel-v2": {"jsonFile": 1}}})",
       Incomplete + "codemodel-v2 reply in '"},
      {CodeModel, "nul", "codemodel-v2-1.json' is not valid JSON: "},
      {CodeModel, R"({"configurations": []})", Incomplete + "configuration"},
      {CodeModel, R"({"configurations": {"targets": []}})",
       Incomplete + "configuration"},
      {CodeModel, R"({"configurations": ["Release"]})", Incomplete + "targets"},
      {CodeModel, R"({"configurations": [{"targets": {}}]})",
       Incomplete + "targets"},
      {CodeModel, R"({"configurations": [{"targets": [7, {"name": 1}]}]})",
       "no target 'app' in the CMake build"},
      {CodeModel,
       R"({"configurations": [{"targets": [{"name": "app", "jsonFile": 2}]}]})",
       "no target 'app' in the CMake build"},
      {AppFile, "[]", Incomplete + "target object in '"},
      {AppFile, R"("app")", Incomplete + "target object in '"},
      {AppFile, R"({"name": "app"} trailing)",
       "target-app.json' is not valid JSON: "},
      {AppFile, "{\"name\": \"\xff\"}", "target-app.json' is not valid JSON: "},
  };
  for (const Case &C : Cases) {
    writeReply();
    put(C.File, C.Text);
    auto T = readCMakeTarget(Dir, "app", false);
    ASSERT_FALSE(bool(T)) << C.File << ": " << C.Text;
    std::string Msg = toString(T.takeError());
    EXPECT_NE(Msg.find(C.Want), std::string::npos)
        << C.File << ": " << C.Text << "\n"
        << Msg;
    // The message is printed as it is: no bytes of the file that are not
    // UTF-8.
    EXPECT_EQ(Msg.find('\xff'), std::string::npos) << Msg;
  }
}

/// A member of another type than the file API's reads as absent: a source
/// without a usable compile group is left out (as a header is), a link
/// fragment without a string role is skipped; the rest is read.
TEST_F(CMakeFileApiTest, MembersOfAnotherTypeAreSkipped) {
  writeReply();
  put(".cmake/api/v1/reply/target-app.json",
      R"({"name": "app", "type": 3,
          "compileGroups": [{"language": "CUDA"}, 5, {"language": ["CXX"]}],
          "sources": [7, {"path": 1, "compileGroupIndex": 0},
                      {"path": "a.cu", "compileGroupIndex": 0.0},
                      {"path": "b.cu", "compileGroupIndex": 0.5},
                      {"path": "c.cu", "compileGroupIndex": "0"},
                      {"path": "d.cu", "compileGroupIndex": -1},
                      {"path": "e.cu", "compileGroupIndex": 3},
                      {"path": "f.cu", "compileGroupIndex": 18446744073709551615},
                      {"path": "g.cu", "compileGroupIndex": true},
                      {"path": "h.cu", "compileGroupIndex": 1},
                      {"path": "i.cu", "compileGroupIndex": 2}],
          "link": {"commandFragments": [
            "-lbad", {"fragment": 1, "role": "libraries"},
            {"fragment": "-lnorole"}, {"fragment": "-lx", "role": 2},
            {"fragment": "-lgood", "role": "libraries"}]}})");
  auto T = readCMakeTarget(Dir, "app", false);
  ASSERT_TRUE(bool(T)) << toString(T.takeError());
  EXPECT_EQ(T->Type, "");
  ASSERT_EQ(T->Sources.size(), 3u);
  EXPECT_EQ(T->Sources[0].Path, "/src/proj/a.cu");
  EXPECT_EQ(T->Sources[0].Language, "CUDA");
  // Groups that are not objects, or whose language is not a string, still
  // count: their sources have no language.
  EXPECT_EQ(T->Sources[1].Path, "/src/proj/h.cu");
  EXPECT_EQ(T->Sources[1].Language, "");
  EXPECT_EQ(T->Sources[2].Path, "/src/proj/i.cu");
  EXPECT_EQ(T->Sources[2].Language, "");
  EXPECT_EQ(T->LinkFlags, std::vector<std::string>{"-lgood"});
  EXPECT_TRUE(T->Notes.empty());
}

/// Without "paths" in the code model, relative sources are read against the
/// build directory.
TEST_F(CMakeFileApiTest, SourcesWithoutASourceDirectory) {
  writeReply();
  put(".cmake/api/v1/reply/codemodel-v2-1.json",
      R"({"paths": {"source": 1}, "configurations": [{"targets": [
            {"name": "app", "jsonFile": "target-app.json"}]}]})");
  auto T = readCMakeTarget(Dir, "app", false);
  ASSERT_TRUE(bool(T)) << toString(T.takeError());
  ASSERT_EQ(T->Sources.size(), 2u);
  EXPECT_EQ(T->Sources[0].Path, std::string(Dir) + "/src/main.cu");
}

TEST(LinkFragmentsTest, OnlyLibrariesAndPaths) {
  std::vector<std::string> Notes;
  auto F = linkFragmentsForNvcc(
      {"-lfoo", "sub/libbar.a", "-pthread", "x.def", "-L/opt", "libz.so.1"},
      "/b", Notes);
  std::vector<std::string> Want = {"-lfoo", "/b/sub/libbar.a", "-L/opt",
                                   "/b/libz.so.1"};
  EXPECT_EQ(F, Want);
  ASSERT_EQ(Notes.size(), 2u);
  EXPECT_EQ(Notes[0], "-pthread: not passed (not a library or library path)");
  EXPECT_EQ(Notes[1], "x.def: not passed (not a library file)");
}

} // namespace
