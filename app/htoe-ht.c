#include "ht_demo.h"
#include <string.h>
int main(int argc, char **argv) { if (argc > 1 && !strcmp(argv[1], "demo")) return ht_demo_main(argc - 1, argv + 1); return 2; } /* placeholder */
