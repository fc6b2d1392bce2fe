// Pre-included (-include pre.h): the program uses it without an #include.
#define PRE_INCLUDED 1
