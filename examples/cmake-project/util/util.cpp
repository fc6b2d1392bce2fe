#include "util.h"
#include <cmath>

void fillValues(std::vector<float> &V, unsigned Seed) {
  unsigned S = Seed * 2654435761u + 1;
  for (float &X : V) {
    S = S * 1664525u + 1013904223u;
    X = (float)(S >> 8) / (float)(1u << 24) - 0.5f;
  }
}

double checksum(const std::vector<float> &V) {
  double Sum = 0;
  for (float X : V)
    Sum += std::fabs((double)X);
  return Sum;
}
