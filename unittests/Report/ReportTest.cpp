//===- ReportTest.cpp - The HTML report and the text summary --------------===//

#include "optiml/Report/Report.h"
#include "gtest/gtest.h"

using namespace optiml;

namespace {

SearchResult sample() {
  SearchResult R;
  SearchNode Root;
  Root.Summary = "original";
  Root.Outcome.Time = {true, 2.0, 1, 20};
  Root.Outcome.Metrics["dram__bytes_read.sum"] = 4e9;
  Root.Children = {1, 2};
  SearchNode A;
  A.Id = 1;
  A.Parent = 0;
  A.Depth = 1;
  A.Status = NodeStatus::Evaluated;
  A.Summary = "vectorize <k> x4";
  A.Evaluation = 1;
  A.Reward.Speed = {1.6, 1.6, Comparison::Faster};
  A.Reward.Bound = "memory-bound";
  A.Reward.Evidence = "dram bytes -50%";
  A.Outcome.Metrics["dram__bytes_read.sum"] = 2e9;
  A.Diff = "-a[i]\n+reinterpret_cast<float4*>(a)[i]\n";
  SearchNode B;
  B.Id = 2;
  B.Parent = 0;
  B.Depth = 1;
  B.Status = NodeStatus::Failed;
  B.Summary = "shared-tiling <k>";
  B.Evaluation = 2;
  B.Reward.Why = "failed verification: buffer 'out' differs at [7]";
  R.Nodes = {Root, A, B};
  R.Evaluations = 2;
  R.Curve = {{1, 1.6}, {2, 1.6}};
  R.Best = 1;
  R.Improved = true;
  R.Conclusion = "1.60x faster than the original (verified), after 1 edit";
  R.FinalDiff = "--- a/k.cu\n+++ b/k.cu\n-x<y\n+x&y\n";
  R.StopReason = "budget of 2 evaluations spent";
  return R;
}

TEST(ReportTest, HtmlHasTreeCurveDiffAndEvidence) {
  std::string H = renderHtmlReport(sample(), {"k.cu",
                                              "clang-optiml optimize "
                                              "k.cu",
                                              "mcts", "catalog", "stand-in"});
  EXPECT_EQ(H.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(H.find("<svg"), std::string::npos);
  EXPECT_NE(H.find("<polyline"), std::string::npos);
  // The tree: the winner, and the failure with its reason.
  EXPECT_NE(H.find("class=\"evaluated best\""), std::string::npos);
  EXPECT_NE(H.find("buffer 'out' differs at [7]"), std::string::npos);
  // Escaped diff, and which metric moved.
  EXPECT_NE(H.find("x&lt;y"), std::string::npos);
  EXPECT_NE(H.find("x&amp;y"), std::string::npos);
  EXPECT_NE(H.find("dram__bytes_read.sum: 4e+09 -&gt; 2e+09 (-50%)"),
            std::string::npos)
      << H;
  // Self-contained: nothing fetched from elsewhere.
  EXPECT_EQ(H.find("<script src"), std::string::npos);
  EXPECT_EQ(H.find("<link"), std::string::npos);
}

TEST(ReportTest, DuplicatesSayWhyTheyWereNotEvaluated) {
  SearchResult R = sample();
  for (bool SameCode : {false, true}) {
    SearchNode D;
    D.Id = static_cast<unsigned>(R.Nodes.size());
    D.Parent = 1;
    D.Depth = 2;
    D.Status = NodeStatus::Duplicate;
    D.Summary = SameCode ? "restrict-const <k>" : "unroll <k>";
    D.DuplicateOf = 1;
    D.SameCode = SameCode;
    R.Nodes[1].Children.push_back(D.Id);
    R.Nodes.push_back(D);
  }
  std::string H = renderHtmlReport(
      R, {"k.cu", "clang-optiml optimize k.cu", "mcts", "catalog", "stand-in"});
  EXPECT_NE(H.find("same program as node 1"), std::string::npos) << H;
  EXPECT_NE(H.find("same compiled code as node 1"), std::string::npos) << H;
}

TEST(ReportTest, MetricChangesAreSortedAndFiltered) {
  EvalOutcome A, B;
  A.Metrics = {{"m1", 100}, {"m2", 100}, {"m3", 100}};
  B.Metrics = {{"m1", 110}, {"m2", 50}, {"m3", 100.5}};
  auto M = metricChanges(A, B);
  ASSERT_EQ(M.size(), 2u);
  EXPECT_EQ(M[0].rfind("m2:", 0), 0u);
  EXPECT_EQ(M[1].rfind("m1:", 0), 0u);
}

TEST(ReportTest, SummaryListsSteps) {
  std::string S;
  llvm::raw_string_ostream OS(S);
  printSummary(OS, sample(), {"k.cu", "", "mcts", "catalog", ""});
  EXPECT_NE(S.find("k.cu: 1.60x faster"), std::string::npos) << S;
  EXPECT_NE(S.find("2 evaluations (1 failed, 0 edits rejected"),
            std::string::npos)
      << S;
  EXPECT_NE(S.find("step 1: vectorize <k> x4 (1.60x); dram bytes -50%"),
            std::string::npos)
      << S;
}

} // namespace
