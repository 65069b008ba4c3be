//! The C library (`libribbon.so` / `libribbon.a`, header `ribbon.h`): work in progress (issue 34).
