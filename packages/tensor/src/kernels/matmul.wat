;; The WebAssembly half of the matrix product C = A·B (see matmul-wasm.ts for
;; the JavaScript half, which copies operands into this memory and the result
;; out). `pnpm --filter @dtlab/tensor build:wasm` assembles this file into
;; matmul-wasm-bytes.ts; a test checks that the committed bytes match.
;;
;; It computes exactly what matmul-js.ts computes, in the same order, so the
;; results are equal bit for bit:
;;
;;   c[i][j] = (...((0 + a[i][0]·b[0][j]) + a[i][1]·b[1][j]) + ...) + a[i][K-1]·b[K-1][j]
;;
;; every product and every sum in float64 (a float32 operand is widened
;; exactly on packing; the float32 result is rounded once, on output). There
;; is no fused multiply-add (WebAssembly SIMD has none outside relaxed SIMD,
;; whose results vary by machine), and each element's sum runs k = 0, 1, ...
;; in one accumulator: unrolling and blocking never reassociate it.
;;
;; The shape is the Goto/BLIS one:
;;
;;   for jc in steps of NC columns of B and C
;;     for pc in steps of KC of the inner dimension
;;       pack B[pc.., jc..] into panels 4 columns wide, k-major        (stays in L2/L3)
;;       for ic in steps of MC rows of A and C
;;         pack A[ic.., pc..] into panels 4 rows tall, k-major          (stays in L2)
;;         for each panel of B (jr), for each panel of A (ir):
;;           the 4×4 tile of C += A panel · B panel                     (B panel stays in L1)
;;
;; The 4×4 tile keeps 8 f64x2 accumulators in registers; each step of k loads
;; 2 vectors of B and splats 4 values of A, for 8 multiplies and 8 adds of two
;; lanes. x64 has 16 vector registers and V8 keeps one for itself: 8
;; accumulators + 2 of B + 1 of A + 1 for a product fit, while a 6×4 tile (12
;; accumulators, 16 registers in all) would spill. Unrolling the k loop by two
;; measured 15-20% slower in V8 (node 20), so it takes one step at a time.
;;
;; The tiles accumulate in a float64 scratch C padded to whole tiles (rows to a
;; multiple of 4, row length Np = N rounded up to 4); packing pads A's missing
;; rows and B's missing columns with zeros, so every tile is full and only the
;; final copy to `out` looks at the true M and N. A K-block after the first
;; resumes from the partial sums stored in C, which is the same sequence of
;; additions as one long loop.
;;
;; Operands are read through element strides, so a transposed, sliced or
;; broadcast matrix needs no copy beyond the one into this memory. All
;; addresses are byte offsets into the one exported memory.
(module
  (memory (export "memory") 1)

  ;; Copies 4 lines of `kc` elements into dst[k·4 + t] (float64), widening
  ;; float32 when $f32 is set. Line t starts at src + t·lineStride and steps
  ;; by kStride bytes; lines from $lines on are zeros (the matrix's edge).
  (func $pack (param $src i32) (param $lineStride i32) (param $kStride i32)
              (param $lines i32) (param $kc i32) (param $dst i32) (param $f32 i32)
    (local $t i32) (local $s i32) (local $d i32) (local $end i32)
    (loop $line
      (local.set $d (i32.add (local.get $dst) (i32.shl (local.get $t) (i32.const 3))))
      (local.set $end (i32.add (local.get $d) (i32.shl (local.get $kc) (i32.const 5))))
      (local.set $s (i32.add (local.get $src) (i32.mul (local.get $t) (local.get $lineStride))))
      (if (i32.ge_u (local.get $t) (local.get $lines))
        (then
          (loop $zero
            (f64.store (local.get $d) (f64.const 0))
            (local.set $d (i32.add (local.get $d) (i32.const 32)))
            (br_if $zero (i32.lt_u (local.get $d) (local.get $end)))))
        (else
          (if (local.get $f32)
            (then
              (loop $k32
                (f64.store (local.get $d) (f64.promote_f32 (f32.load (local.get $s))))
                (local.set $s (i32.add (local.get $s) (local.get $kStride)))
                (local.set $d (i32.add (local.get $d) (i32.const 32)))
                (br_if $k32 (i32.lt_u (local.get $d) (local.get $end)))))
            (else
              (loop $k64
                (f64.store (local.get $d) (f64.load (local.get $s)))
                (local.set $s (i32.add (local.get $s) (local.get $kStride)))
                (local.set $d (i32.add (local.get $d) (i32.const 32)))
                (br_if $k64 (i32.lt_u (local.get $d) (local.get $end))))))))
      (local.set $t (i32.add (local.get $t) (i32.const 1)))
      (br_if $line (i32.lt_u (local.get $t) (i32.const 4)))))

  ;; The 4×4 tile of C at $c (rows $ldc bytes apart) plus the product of an A
  ;; panel ($ap, [kc][4]) and a B panel ($bp, [kc][4]); $kc ≥ 1. With $first
  ;; set the tile starts from zeros (it holds nothing yet) instead of C.
  (func $tile (param $kc i32) (param $ap i32) (param $bp i32) (param $c i32) (param $ldc i32) (param $first i32)
    (local $c00 v128) (local $c01 v128) (local $c10 v128) (local $c11 v128)
    (local $c20 v128) (local $c21 v128) (local $c30 v128) (local $c31 v128)
    (local $a v128) (local $b0 v128) (local $b1 v128)
    (local $end i32) (local $r1 i32) (local $r2 i32) (local $r3 i32)
    (local.set $r1 (i32.add (local.get $c) (local.get $ldc)))
    (local.set $r2 (i32.add (local.get $r1) (local.get $ldc)))
    (local.set $r3 (i32.add (local.get $r2) (local.get $ldc)))
    (if (i32.eqz (local.get $first))
      (then
        (local.set $c00 (v128.load (local.get $c)))
        (local.set $c01 (v128.load offset=16 (local.get $c)))
        (local.set $c10 (v128.load (local.get $r1)))
        (local.set $c11 (v128.load offset=16 (local.get $r1)))
        (local.set $c20 (v128.load (local.get $r2)))
        (local.set $c21 (v128.load offset=16 (local.get $r2)))
        (local.set $c30 (v128.load (local.get $r3)))
        (local.set $c31 (v128.load offset=16 (local.get $r3)))))
    (local.set $end (i32.add (local.get $ap) (i32.shl (local.get $kc) (i32.const 5))))
    (loop $k
      (local.set $b0 (v128.load (local.get $bp)))
      (local.set $b1 (v128.load offset=16 (local.get $bp)))
      (local.set $a (v128.load64_splat (local.get $ap)))
      (local.set $c00 (f64x2.add (local.get $c00) (f64x2.mul (local.get $a) (local.get $b0))))
      (local.set $c01 (f64x2.add (local.get $c01) (f64x2.mul (local.get $a) (local.get $b1))))
      (local.set $a (v128.load64_splat offset=8 (local.get $ap)))
      (local.set $c10 (f64x2.add (local.get $c10) (f64x2.mul (local.get $a) (local.get $b0))))
      (local.set $c11 (f64x2.add (local.get $c11) (f64x2.mul (local.get $a) (local.get $b1))))
      (local.set $a (v128.load64_splat offset=16 (local.get $ap)))
      (local.set $c20 (f64x2.add (local.get $c20) (f64x2.mul (local.get $a) (local.get $b0))))
      (local.set $c21 (f64x2.add (local.get $c21) (f64x2.mul (local.get $a) (local.get $b1))))
      (local.set $a (v128.load64_splat offset=24 (local.get $ap)))
      (local.set $c30 (f64x2.add (local.get $c30) (f64x2.mul (local.get $a) (local.get $b0))))
      (local.set $c31 (f64x2.add (local.get $c31) (f64x2.mul (local.get $a) (local.get $b1))))
      (local.set $ap (i32.add (local.get $ap) (i32.const 32)))
      (local.set $bp (i32.add (local.get $bp) (i32.const 32)))
      (br_if $k (i32.lt_u (local.get $ap) (local.get $end))))
    (v128.store (local.get $c) (local.get $c00))
    (v128.store offset=16 (local.get $c) (local.get $c01))
    (v128.store (local.get $r1) (local.get $c10))
    (v128.store offset=16 (local.get $r1) (local.get $c11))
    (v128.store (local.get $r2) (local.get $c20))
    (v128.store offset=16 (local.get $r2) (local.get $c21))
    (v128.store (local.get $r3) (local.get $c30))
    (v128.store offset=16 (local.get $r3) (local.get $c31)))

  ;; out (M×N, row-major, float32 when $f32 is set, else float64) = A·B, for A
  ;; (M×K) at $a and B (K×N) at $b in the operand dtype, with element strides
  ;; ($ars, $acs) and ($brs, $bcs). $c is the float64 scratch C, at least
  ;; ceil(M/4)·4 × Np elements (Np = ceil(N/4)·4); $work holds the packs, at
  ;; least (MC + NC)·KC float64. M, N ≥ 1 and K ≥ 1 (the caller handles empty
  ;; products).
  (func (export "gemm")
    (param $M i32) (param $K i32) (param $N i32)
    (param $a i32) (param $ars i32) (param $acs i32)
    (param $b i32) (param $brs i32) (param $bcs i32)
    (param $out i32) (param $c i32) (param $work i32) (param $f32 i32)
    (local $shift i32) (local $ldc i32) (local $bpBase i32)
    (local $jc i32) (local $nc i32) (local $pc i32) (local $kc i32) (local $ic i32) (local $mc i32)
    (local $jr i32) (local $ir i32) (local $i i32) (local $j i32) (local $src i32) (local $dst i32)
    ;; Element strides become byte strides.
    (local.set $shift (select (i32.const 2) (i32.const 3) (local.get $f32)))
    (local.set $ars (i32.shl (local.get $ars) (local.get $shift)))
    (local.set $acs (i32.shl (local.get $acs) (local.get $shift)))
    (local.set $brs (i32.shl (local.get $brs) (local.get $shift)))
    (local.set $bcs (i32.shl (local.get $bcs) (local.get $shift)))
    (local.set $ldc (i32.shl (i32.and (i32.add (local.get $N) (i32.const 3)) (i32.const -4)) (i32.const 3)))
    ;; MC = 128 rows of A per pack (128·256·8 = 256 KiB, half of L2), then the B pack.
    (local.set $bpBase (i32.add (local.get $work) (i32.const 262144)))
    (loop $jcLoop
      ;; NC = 512 columns of B per pack (256·512·8 = 1 MiB).
      (local.set $nc (i32.sub (local.get $N) (local.get $jc)))
      (if (i32.gt_u (local.get $nc) (i32.const 512)) (then (local.set $nc (i32.const 512))))
      (local.set $pc (i32.const 0))
      (loop $pcLoop
        ;; KC = 256 steps of k per pack: a 4-wide panel of B is 8 KiB, in L1.
        (local.set $kc (i32.sub (local.get $K) (local.get $pc)))
        (if (i32.gt_u (local.get $kc) (i32.const 256)) (then (local.set $kc (i32.const 256))))
        ;; Panels of B: lines are columns (bcs apart), k runs down rows (brs).
        (local.set $jr (i32.const 0))
        (loop $packB
          (call $pack
            (i32.add (local.get $b) (i32.add (i32.mul (local.get $pc) (local.get $brs)) (i32.mul (i32.add (local.get $jc) (local.get $jr)) (local.get $bcs))))
            (local.get $bcs) (local.get $brs)
            (i32.sub (local.get $nc) (local.get $jr)) (local.get $kc)
            (i32.add (local.get $bpBase) (i32.shl (i32.mul (local.get $jr) (local.get $kc)) (i32.const 3)))
            (local.get $f32))
          (local.set $jr (i32.add (local.get $jr) (i32.const 4)))
          (br_if $packB (i32.lt_u (local.get $jr) (local.get $nc))))
        (local.set $ic (i32.const 0))
        (loop $icLoop
          (local.set $mc (i32.sub (local.get $M) (local.get $ic)))
          (if (i32.gt_u (local.get $mc) (i32.const 128)) (then (local.set $mc (i32.const 128))))
          ;; Panels of A: lines are rows (ars apart), k runs along columns (acs).
          (local.set $ir (i32.const 0))
          (loop $packA
            (call $pack
              (i32.add (local.get $a) (i32.add (i32.mul (i32.add (local.get $ic) (local.get $ir)) (local.get $ars)) (i32.mul (local.get $pc) (local.get $acs))))
              (local.get $ars) (local.get $acs)
              (i32.sub (local.get $mc) (local.get $ir)) (local.get $kc)
              (i32.add (local.get $work) (i32.shl (i32.mul (local.get $ir) (local.get $kc)) (i32.const 3)))
              (local.get $f32))
            (local.set $ir (i32.add (local.get $ir) (i32.const 4)))
            (br_if $packA (i32.lt_u (local.get $ir) (local.get $mc))))
          (local.set $jr (i32.const 0))
          (loop $jrLoop
            (local.set $ir (i32.const 0))
            (loop $irLoop
              (call $tile (local.get $kc)
                (i32.add (local.get $work) (i32.shl (i32.mul (local.get $ir) (local.get $kc)) (i32.const 3)))
                (i32.add (local.get $bpBase) (i32.shl (i32.mul (local.get $jr) (local.get $kc)) (i32.const 3)))
                (i32.add (local.get $c) (i32.add
                  (i32.mul (i32.add (local.get $ic) (local.get $ir)) (local.get $ldc))
                  (i32.shl (i32.add (local.get $jc) (local.get $jr)) (i32.const 3))))
                (local.get $ldc)
                (i32.eqz (local.get $pc)))
              (local.set $ir (i32.add (local.get $ir) (i32.const 4)))
              (br_if $irLoop (i32.lt_u (local.get $ir) (local.get $mc))))
            (local.set $jr (i32.add (local.get $jr) (i32.const 4)))
            (br_if $jrLoop (i32.lt_u (local.get $jr) (local.get $nc))))
          (local.set $ic (i32.add (local.get $ic) (i32.const 128)))
          (br_if $icLoop (i32.lt_u (local.get $ic) (local.get $M))))
        (local.set $pc (i32.add (local.get $pc) (i32.const 256)))
        (br_if $pcLoop (i32.lt_u (local.get $pc) (local.get $K))))
      (local.set $jc (i32.add (local.get $jc) (i32.const 512)))
      (br_if $jcLoop (i32.lt_u (local.get $jc) (local.get $N))))
    ;; The true M×N part of C, rounded to float32 or copied, row by row.
    (local.set $dst (local.get $out))
    (loop $row
      (local.set $src (i32.add (local.get $c) (i32.mul (local.get $i) (local.get $ldc))))
      (local.set $j (i32.const 0))
      (if (local.get $f32)
        (then
          (loop $col32
            (f32.store (local.get $dst) (f32.demote_f64 (f64.load (local.get $src))))
            (local.set $src (i32.add (local.get $src) (i32.const 8)))
            (local.set $dst (i32.add (local.get $dst) (i32.const 4)))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br_if $col32 (i32.lt_u (local.get $j) (local.get $N)))))
        (else
          (memory.copy (local.get $dst) (local.get $src) (i32.shl (local.get $N) (i32.const 3)))
          (local.set $dst (i32.add (local.get $dst) (i32.shl (local.get $N) (i32.const 3))))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $row (i32.lt_u (local.get $i) (local.get $M))))))
