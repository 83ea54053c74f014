/*
 * exec_cuda_ops.cuh - element operations of the GPU executor (device code).
 *
 * Every data type of tt_exec.h is handled through a storage type S and the
 * operation rop<Tag, OP>(a, b).  The semantics are exactly those of the host
 * reductions (exec_reduce.c): integers wrap (computed unsigned), min/max on
 * floating types propagate NaN, half/bfloat16 are combined in float and
 * rounded back to nearest-even at every step, avg divides the finished sum
 * once (integers: C truncating division).  Packs of 8 or 16 bytes are
 * reduced element by element (red_pack).
 */
#ifndef EXEC_CUDA_OPS_CUH
#define EXEC_CUDA_OPS_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "tt_exec.h"

struct tt_f16 {};   /* tag: IEEE half stored in uint16_t */
struct tt_bf16 {};  /* tag: bfloat16 stored in uint16_t */

template <class Tag> struct Tr { typedef Tag S; typedef Tag U; enum { FLT = 0, H16 = 0 }; };
template <> struct Tr<int8_t> { typedef int8_t S; typedef uint8_t U; enum { FLT = 0, H16 = 0 }; };
template <> struct Tr<uint8_t> { typedef uint8_t S; typedef uint8_t U; enum { FLT = 0, H16 = 0 }; };
template <> struct Tr<int32_t> { typedef int32_t S; typedef uint32_t U; enum { FLT = 0, H16 = 0 }; };
template <> struct Tr<uint32_t> { typedef uint32_t S; typedef uint32_t U; enum { FLT = 0, H16 = 0 }; };
template <> struct Tr<int64_t> { typedef int64_t S; typedef uint64_t U; enum { FLT = 0, H16 = 0 }; };
template <> struct Tr<uint64_t> { typedef uint64_t S; typedef uint64_t U; enum { FLT = 0, H16 = 0 }; };
template <> struct Tr<float> { typedef float S; typedef float U; enum { FLT = 1, H16 = 0 }; };
template <> struct Tr<double> { typedef double S; typedef double U; enum { FLT = 1, H16 = 0 }; };
template <> struct Tr<tt_f16> { typedef uint16_t S; typedef uint16_t U; enum { FLT = 1, H16 = 1 }; };
template <> struct Tr<tt_bf16> { typedef uint16_t S; typedef uint16_t U; enum { FLT = 1, H16 = 2 }; };

template <class Tag> __device__ __forceinline__ float h_to_f(uint16_t v);
template <> __device__ __forceinline__ float h_to_f<tt_f16>(uint16_t v) { return __half2float(__ushort_as_half(v)); }
template <> __device__ __forceinline__ float h_to_f<tt_bf16>(uint16_t v)
{
    return __uint_as_float((uint32_t)v << 16);
}
template <class Tag> __device__ __forceinline__ uint16_t f_to_h(float f);
template <> __device__ __forceinline__ uint16_t f_to_h<tt_f16>(float f) { return __half_as_ushort(__float2half_rn(f)); }
template <> __device__ __forceinline__ uint16_t f_to_h<tt_bf16>(float f)
{
    return __bfloat16_as_ushort(__float2bfloat16_rn(f));
}

/* The combining rules, shared by plain and 16-bit float types. */
template <class V, int OP> __device__ __forceinline__ V fop(V a, V b)
{
    if (OP == TT_SUM || OP == TT_AVG) return a + b;
    if (OP == TT_PROD) return a * b;
    if (OP == TT_MIN) return a != a ? a : b != b ? b : (b < a ? b : a);
    return a != a ? a : b != b ? b : (b > a ? b : a);
}

template <class Tag, int OP>
__device__ __forceinline__ typename Tr<Tag>::S rop(typename Tr<Tag>::S a, typename Tr<Tag>::S b)
{
    typedef typename Tr<Tag>::S S;
    typedef typename Tr<Tag>::U U;
    if constexpr (Tr<Tag>::H16 != 0) {
        return (S)f_to_h<Tag>(fop<float, OP>(h_to_f<Tag>((uint16_t)a), h_to_f<Tag>((uint16_t)b)));
    } else if constexpr (Tr<Tag>::FLT != 0) {
        return fop<S, OP>(a, b);
    } else {
        if (OP == TT_SUM || OP == TT_AVG) return (S)(U)((U)a + (U)b);
        if (OP == TT_PROD) return (S)(U)((U)a * (U)b);
        if (OP == TT_MIN) return b < a ? b : a;
        return b > a ? b : a;
    }
}

/* avg: divide the finished sum once. */
template <class Tag> __device__ __forceinline__ typename Tr<Tag>::S rdiv(typename Tr<Tag>::S a, int d)
{
    typedef typename Tr<Tag>::S S;
    if constexpr (Tr<Tag>::H16 != 0) return (S)f_to_h<Tag>(h_to_f<Tag>((uint16_t)a) / (float)d);
    else if constexpr (Tr<Tag>::FLT != 0) return (S)(a / (S)d);
    else if constexpr ((S)-1 < (S)0) return (S)((long long)a / (long long)d);
    else return (S)((unsigned long long)a / (unsigned long long)d);
}

/* Packs of N bytes (8 or 16) seen as arrays of S. */
template <class Tag, int OP, int N> struct Pack {
    typedef typename Tr<Tag>::S S;
    enum { E = N / (int)sizeof(S) };
    union U { uint4 v16; uint2 v8; S e[E]; };
};

template <class Tag, int OP>
__device__ __forceinline__ uint4 red16(uint4 a, uint4 b)
{
    typename Pack<Tag, OP, 16>::U x, y;
    x.v16 = a;
    y.v16 = b;
#pragma unroll
    for (int i = 0; i < Pack<Tag, OP, 16>::E; i++) x.e[i] = rop<Tag, OP>(x.e[i], y.e[i]);
    return x.v16;
}
template <class Tag>
__device__ __forceinline__ uint4 div16(uint4 a, int d)
{
    typename Pack<Tag, TT_SUM, 16>::U x;
    x.v16 = a;
#pragma unroll
    for (int i = 0; i < Pack<Tag, TT_SUM, 16>::E; i++) x.e[i] = rdiv<Tag>(x.e[i], d);
    return x.v16;
}
/* 8-byte packs (LL payload); n = valid elements (the rest is left as is). */
template <class Tag, int OP>
__device__ __forceinline__ uint64_t red8(uint64_t a, uint64_t b)
{
    typedef typename Tr<Tag>::S S;
    union { uint64_t v; S e[8 / sizeof(S)]; } x, y;
    x.v = a;
    y.v = b;
#pragma unroll
    for (int i = 0; i < (int)(8 / sizeof(S)); i++) x.e[i] = rop<Tag, OP>(x.e[i], y.e[i]);
    return x.v;
}
template <class Tag>
__device__ __forceinline__ uint64_t div8(uint64_t a, int d)
{
    typedef typename Tr<Tag>::S S;
    union { uint64_t v; S e[8 / sizeof(S)]; } x;
    x.v = a;
#pragma unroll
    for (int i = 0; i < (int)(8 / sizeof(S)); i++) x.e[i] = rdiv<Tag>(x.e[i], d);
    return x.v;
}

#endif
