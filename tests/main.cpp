// The test suite's entry point (Catch2 v2).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
