#define SCALE_N (1 << 20)
