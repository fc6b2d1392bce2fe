// Found only through an include path the program is built with.
#ifndef APP_N
#error "build with -DAPP_N=<elements>"
#endif
#define SCALE 2.0f
