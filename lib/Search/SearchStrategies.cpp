//===- SearchStrategies.cpp - MCTS, greedy, beam and random search --------===//
//
// The loop of each strategy over the Searcher's steps, until the budget is
// spent or the search stops.
//
//===----------------------------------------------------------------------===//

#include "SearchInternal.h"
#include "optiml/Frontend/Parse.h"
#include "optiml/Search/Journal.h"
#include "optiml/Support/FileUtil.h"
#include "optiml/Support/Sort.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include <algorithm>
#include <chrono>
#include <cmath>
#include <future>
#include <map>
#include <random>
#include <set>

using namespace llvm;

namespace optiml {
namespace search {

Expected<bool> Searcher::tryCombination() {
  if (Best <= 0 || Nodes[Best].Path.empty())
    return false;
  std::string First = editKey(Nodes[Best].Path.front());
  std::vector<unsigned> Faster;
  for (unsigned C : Nodes[0].Children) {
    const SearchNode &N = Nodes[C];
    if (N.Status == NodeStatus::Evaluated && N.expandable() &&
        N.Depth < O.MaxDepth && N.Reward.Speed.Cmp == Comparison::Faster &&
        N.Step && editKey(*N.Step) != First)
      Faster.push_back(C);
  }
  stableSort(Faster, [&](unsigned L, unsigned R) {
    return Nodes[L].Reward.Total > Nodes[R].Reward.Total;
  });
  for (unsigned C : Faster) {
    if (!Combined.insert({C, First}).second)
      continue;
    if (auto Err = ensureProposed(C))
      return std::move(Err);
    const std::vector<Action> &U = Nodes[C].Untried;
    auto It = llvm::find_if(
        U, [&](const Action &A) { return editKey(A.E) == First; });
    if (It == U.end())
      continue;
    auto New = expand(C, It - U.begin(), /*Only=*/true);
    if (!New)
      return New.takeError();
    if (*New)
      return true;
  }
  return false;
}

Error Searcher::runMcts() {
  while (haveBudget()) {
    auto Combo = tryCombination();
    if (!Combo)
      return Combo.takeError();
    if (*Combo)
      continue;
    unsigned Id = 0;
    bool Evaluated = false;
    while (!Evaluated && haveBudget()) {
      if (auto Err = ensureProposed(Id))
        return Err;
      SearchNode &N = Nodes[Id];
      bool CanWiden = !N.Untried.empty() && N.Depth < O.MaxDepth &&
                      evaluatedChildren(N) <
                          wideningLimit(N.Visits, O.WideningC, O.WideningAlpha);
      std::vector<unsigned> Sel;
      for (unsigned C : N.Children)
        if (selectable(Nodes[C]))
          Sel.push_back(C);
      if (CanWiden || (Sel.empty() && !N.Untried.empty())) {
        auto New = expand(Id);
        if (!New)
          return New.takeError();
        if (*New) {
          Evaluated = true;
          break;
        }
        continue; // everything left was rejected or a duplicate
      }
      if (Sel.empty()) {
        // Nothing left below this node.
        Nodes[Id].Exhausted = true;
        if (Id == 0) {
          StopReason = "every reachable program has been evaluated";
          return Error::success();
        }
        break; // start again from the root
      }
      unsigned BestC = Sel.front();
      double BestS = -1e300;
      for (unsigned C : Sel) {
        double S = puctScore(q(Nodes[C]), Nodes[C].Prior, N.Visits,
                             Nodes[C].Visits, O.CPuct);
        if (S > BestS) {
          BestS = S;
          BestC = C;
        }
      }
      Id = BestC;
    }
  }
  return Error::success();
}

Error Searcher::runGreedy() {
  // Best first: always expand the best state that still has actions.
  while (haveBudget()) {
    int Pick = -1;
    for (const SearchNode &N : Nodes) {
      if (!(N.Status == NodeStatus::Original ||
            N.Status == NodeStatus::Evaluated) ||
          !N.expandable() || N.Exhausted)
        continue;
      if (Pick < 0 || N.Reward.Total > Nodes[Pick].Reward.Total + 1e-12 ||
          (std::abs(N.Reward.Total - Nodes[Pick].Reward.Total) <= 1e-12 &&
           N.Depth > Nodes[Pick].Depth))
        Pick = N.Id;
    }
    if (Pick < 0) {
      StopReason = "every reachable program has been evaluated";
      return Error::success();
    }
    if (auto Err = ensureProposed(Pick))
      return Err;
    if (Nodes[Pick].Untried.empty()) {
      Nodes[Pick].Exhausted = true;
      continue;
    }
    auto New = expand(Pick);
    if (!New)
      return New.takeError();
  }
  return Error::success();
}

Error Searcher::runBeam() {
  std::vector<unsigned> Beam{0};
  while (haveBudget() && !Beam.empty()) {
    std::vector<unsigned> Next;
    for (unsigned B : Beam) {
      if (auto Err = ensureProposed(B))
        return Err;
      while (!Nodes[B].Untried.empty() && haveBudget()) {
        auto New = expand(B);
        if (!New)
          return New.takeError();
      }
      for (unsigned C : Nodes[B].Children)
        if (selectable(Nodes[C]))
          Next.push_back(C);
    }
    stableSort(Next, [&](unsigned L, unsigned R) {
      return Nodes[L].Reward.Total > Nodes[R].Reward.Total;
    });
    if (Next.size() > O.BeamWidth)
      Next.resize(O.BeamWidth);
    Beam = std::move(Next);
  }
  if (Beam.empty() && StopReason.empty())
    StopReason = "every reachable program has been evaluated";
  return Error::success();
}

Error Searcher::runRandom() {
  while (haveBudget()) {
    std::vector<unsigned> Open = randomOpen();
    if (Open.empty()) {
      StopReason = "every reachable program has been evaluated";
      return Error::success();
    }
    unsigned Pick = Open[Rng() % Open.size()];
    if (auto Err = ensureProposed(Pick))
      return Err;
    if (Nodes[Pick].Untried.empty()) {
      Nodes[Pick].Exhausted = true;
      continue;
    }
    auto New = expand(Pick, Rng() % Nodes[Pick].Untried.size());
    if (!New)
      return New.takeError();
  }
  return Error::success();
}

} // namespace search
} // namespace optiml
