#include "ht_demo.h"
int ht_demo_main(int argc, char **argv) { (void)argc; (void)argv; return 1; } /* placeholder */
