#include <vector>

double checksum(const std::vector<float> &V) {
  double S = 0;
  for (float X : V)
    S += X;
  return S;
}
