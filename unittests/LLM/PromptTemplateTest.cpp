//===- PromptTemplateTest.cpp ---------------------------------------------===//

#include "optiml/LLM/PromptTemplate.h"
#include "optiml/LLM/LLMError.h"

#include "gtest/gtest.h"

using namespace llvm;

namespace optiml {
namespace llm {
namespace {

TEST(PromptTemplate, Renders) {
  Expected<PromptTemplate> T =
      PromptTemplate::parse("Kernel {{ name }}:\n{{code}}\n{{name}}!", "t");
  ASSERT_TRUE(bool(T)) << toString(T.takeError());
  EXPECT_EQ(T->placeholders(), (std::vector<std::string>{"name", "code"}));
  StringMap<std::string> V;
  V["name"] = "k";
  V["code"] = "x = {{name}};"; // Substituted text is not re-scanned.
  V["unused"] = "fine";
  Expected<std::string> Out = T->render(V);
  ASSERT_TRUE(bool(Out)) << toString(Out.takeError());
  EXPECT_EQ(*Out, "Kernel k:\nx = {{name}};\nk!");
}

TEST(PromptTemplate, Errors) {
  Expected<PromptTemplate> T = PromptTemplate::parse("a\n{{open", "t.md");
  ASSERT_FALSE(bool(T));
  EXPECT_EQ(toString(T.takeError()), "t.md:2: '{{' without a closing '}}'");
  T = PromptTemplate::parse("{{two words}}", "t.md");
  ASSERT_FALSE(bool(T));
  EXPECT_EQ(toString(T.takeError()),
            "t.md:1: bad placeholder name 'two words'");
  T = PromptTemplate::parse("{{missing}}", "t.md");
  ASSERT_TRUE(bool(T));
  Expected<std::string> Out = T->render({});
  ASSERT_FALSE(bool(Out));
  EXPECT_EQ(toString(Out.takeError()),
            "prompt template t.md uses {{missing}}, which has no value");
}

TEST(PromptLibrary, RepositoryPromptsLoadAndRender) {
  Expected<PromptLibrary> L = PromptLibrary::load(OPTIML_TEST_PROMPTS_DIR);
  ASSERT_TRUE(bool(L)) << toString(L.takeError());
  for (const char *Name :
       {"propose.system", "propose.user", "rank.system", "rank.user"})
    EXPECT_TRUE(L->contains(Name)) << Name;
  Expected<std::string> Missing = L->render("nope", {});
  ASSERT_FALSE(bool(Missing));
  consumeError(Missing.takeError());
}

TEST(PromptLibrary, FindsTheDirectory) {
  Expected<std::string> D =
      findPromptDirectory(OPTIML_TEST_PROMPTS_DIR, nullptr, nullptr);
  ASSERT_TRUE(bool(D));
  EXPECT_EQ(*D, OPTIML_TEST_PROMPTS_DIR);
  Expected<std::string> Bad =
      findPromptDirectory("/nonexistent/prompts", nullptr, nullptr);
  ASSERT_FALSE(bool(Bad));
  consumeError(Bad.takeError());
  // From the test binary: not installed, so the source tree's copy.
  Expected<std::string> Fallback = findPromptDirectory(
      "", "LLMTests", reinterpret_cast<void *>(&findPromptDirectory));
  ASSERT_TRUE(bool(Fallback)) << toString(Fallback.takeError());
  EXPECT_TRUE(StringRef(*Fallback).ends_with("prompts"));
}

} // namespace
} // namespace llm
} // namespace optiml
