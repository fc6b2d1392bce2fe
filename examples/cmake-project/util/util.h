// Host helpers of the example project, built as the static library util.
#pragma once
#include <vector>

// Deterministic values in [-0.5, 0.5).
void fillValues(std::vector<float> &V, unsigned Seed);
// Sum of |v|, in double.
double checksum(const std::vector<float> &V);
