// Built into lib/libhelper.a by the tests; the program links it with
// -L<lib> -lhelper.
double helperSum(const float *V, int N) {
  double S = 0;
  for (int I = 0; I < N; ++I)
    S += V[I];
  return S;
}
