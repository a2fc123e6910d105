// SPDX-License-Identifier: MIT
// compile_header_cxx.cpp - the same check as compile_header.c, compiled as C++17.
#include "compile_header.c"
