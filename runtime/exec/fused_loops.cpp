// A Fused node's composed loops and block sums (exec/fused_loops.h),
// compiled once per instruction set (ops/isa.h).

#include <algorithm>
#include <bit>
#include <limits>
#include <type_traits>

#include "exec/fused_loops.h"
#include "ops/scalar_ops.h"

AG_ISA_BEGIN
namespace ag::exec::AG_ISA_NS {

namespace {

// A block's float sum of value(0), ..., value(n - 1): more independent
// lanes than the reduction kernel's eight, so that the block's additions do
// not wait on each other (four vector registers in flight). Only the order
// of the additions differs from the kernel's (the bound is in
// tests/runtime/pass_fusion_test.cpp).
template <class T, class Value>
T sum_values(int64_t n, Value value) {
  constexpr int64_t kLanes = kFusedSumLanes;
  if (n < kLanes) {
    T sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += value(i);
    return sum;
  }
  T lanes[kLanes];
  for (int64_t l = 0; l < kLanes; ++l) lanes[l] = value(l);
  const int64_t body = n - n % kLanes;
  for (int64_t i = kLanes; i < body; i += kLanes) {
    for (int64_t l = 0; l < kLanes; ++l) lanes[l] += value(i + l);
  }
  // Pairwise, so the lanes' sum is a short chain of vector additions;
  // unrolled, as it runs once per block.
#pragma GCC unroll 8
  for (int64_t width = kLanes / 2; width > 0; width /= 2) {
    for (int64_t l = 0; l < width; ++l) lanes[l] += lanes[l + width];
  }
  T sum = lanes[0];
  for (int64_t i = body; i < n; ++i) sum += value(i);
  return sum;
}

template <class T>
T sum_block(const T* x, int64_t n) {
  return sum_values<T>(n, [x](int64_t i) { return x[i]; });
}

// ---- Composed loops -----------------------------------------------------------

// v = F(a[i], b[i]), then G on v, v in a register: per block, written to
// `out`, or (kSum) summed into *out in sum_block's lanes and order.
template <class T, class F, class G, SecondForm kForm, bool kSum>
void arithmetic_pair(const void* const* operands, int64_t n, void* out, void*, uint32_t) {
  const T* a = static_cast<const T*>(operands[0]);
  const T* b = static_cast<const T*>(operands[1]);
  const T* e = static_cast<const T*>(operands[2]);
  auto value = [a, b, e](int64_t i) {
    const T v = F{}(a[i], b[i]);
    if constexpr (kForm == SecondForm::kBoth) {
      return G{}(v, v);
    } else if constexpr (kForm == SecondForm::kLeft) {
      return G{}(v, e[i]);
    } else {
      return G{}(e[i], v);
    }
  };
  if constexpr (kSum) {
    *static_cast<T*>(out) = sum_values<T>(n, value);
  } else {
    T* o = static_cast<T*>(out);
    for (int64_t i = 0; i < n; ++i) o[i] = value(i);
  }
}

// Calls run(product) with x -> x * s for integers as MulOp computes it
// (wrapping): when s is 2^p or 2^p + 2^q, shifts and an add in the unsigned
// type, as SSE2 has no 32-bit multiply, which costs six instructions per
// vector (3 * x + 1: 3 = 2 + 1); other scalars multiply.
template <class T, class Run>
void with_scaled_product(T s, Run run) {
  using U = std::make_unsigned_t<T>;
  const auto bits = U(s);
  const U rest = bits & U(bits - 1);  // without the lowest set bit
  const int p = s > 0 ? std::countr_zero(bits) : 0;
  const int q = rest ? std::countr_zero(rest) : 0;
  if (s > 0 && rest == 0) {
    run([p](T x) { return T(U(x) << p); });
  } else if (s > 0 && p == 0 && (rest & U(rest - 1)) == 0) {  // 2^q + 1: one shift
    run([q](T x) { return T(U(x) + U(U(x) << q)); });
  } else if (s > 0 && (rest & U(rest - 1)) == 0) {
    run([p, q](T x) { return T(U(U(x) << p) + U(U(x) << q)); });
  } else {
    run([s](T x) { return ops::scalar::MulOp{}(x, s); });
  }
}

// v = a[i] * s for integers, s a broadcast scalar (with_scaled_product),
// then G on v as in arithmetic_pair.
template <class T, class G, SecondForm kForm>
void scaled_pair(const void* const* operands, int64_t n, void* out, void*, uint32_t) {
  const T* a = static_cast<const T*>(operands[0]);
  const T s = *static_cast<const T*>(operands[1]);
  const T* e = static_cast<const T*>(operands[2]);
  T* o = static_cast<T*>(out);
  with_scaled_product(s, [&](auto product) {
    for (int64_t i = 0; i < n; ++i) {
      const T v = product(a[i]);
      if constexpr (kForm == SecondForm::kBoth) {
        o[i] = G{}(v, v);
      } else if constexpr (kForm == SecondForm::kLeft) {
        o[i] = G{}(v, e[i]);
      } else {
        o[i] = G{}(e[i], v);
      }
    }
  });
}

// o[i] = value(i) for the block; with a Fold (the reducer of an integer
// max or min of the node's value, its second output), also the block's
// partial result into *reduced: folded in the same loop from the reduction
// of no elements, exact in any order, so the reduction kernel's result.
template <class T, class Fold, class Value>
void store_block(int64_t n, T* o, void* reduced, Value value) {
  if constexpr (std::is_void_v<Fold>) {
    for (int64_t i = 0; i < n; ++i) o[i] = value(i);
  } else {
    T acc = std::is_same_v<Fold, ops::scalar::MaximumOp> ? std::numeric_limits<T>::lowest()
                                                         : std::numeric_limits<T>::max();
    for (int64_t i = 0; i < n; ++i) {
      const T v = value(i);
      o[i] = v;
      acc = Fold{}(acc, v);
    }
    *static_cast<T*>(reduced) = acc;
  }
}

// where(Cmp(p, q), a, b), the compare's value never stored: a compare read
// only as a where's condition runs in the where's loop, so no bool block is
// written and widened again.
template <class T, class Cmp, class Fold>
void compare_select(const void* const* operands, int64_t n, void* out, void* reduced, uint32_t) {
  const T* p = static_cast<const T*>(operands[0]);
  const T* q = static_cast<const T*>(operands[1]);
  const T* a = static_cast<const T*>(operands[2]);
  const T* b = static_cast<const T*>(operands[3]);
  store_block<T, Fold>(n, static_cast<T*>(out), reduced, [&](int64_t i) {
    // Both values loaded on every element, so that GCC selects with masks.
    const T x = a[i], y = b[i];
    return Cmp{}(p[i], q[i]) ? x : y;
  });
}

// Calls run(quotient, remainder, vectorises) with x -> x // s and
// x -> x mod s for integers as their kernels compute them: a shift and a
// mask when s is a positive power of two (vectorises: std::true_type), else
// FloorDivOp and ModOp per element (std::false_type).
template <class T, class Run>
void with_division(T s, Run run) {
  if (s > 0 && (s & (s - 1)) == 0) {
    const int shift = std::countr_zero(std::make_unsigned_t<T>(s));
    const T mask = T(s - 1);
    run([shift](T v) { return T(v >> shift); }, [mask](T v) { return T(v & mask); },
        std::true_type{});
  } else {
    run([s](T v) { return ops::scalar::FloorDivOp{}(v, s); },
        [s](T v) { return ops::scalar::ModOp{}(v, s); }, std::false_type{});
  }
}

// where(Cmp(a mod s, q), x, y) (kModLeft; else Cmp(q, a mod s)) for integers,
// with a broadcast divisor s: the mod runs in the where's loop too, as its
// kernel runs it (with_division; ModOp per element also raises its division
// by zero before anything is written), so neither the remainder nor the
// comparison is stored.
template <class T, class Cmp, bool kModLeft, class Fold>
void mod_compare_select(const void* const* operands, int64_t n, void* out, void* reduced,
                        uint32_t) {
  const T* a = static_cast<const T*>(operands[0]);
  const T s = *static_cast<const T*>(operands[1]);
  const T* q = static_cast<const T*>(operands[2]);
  const T* x = static_cast<const T*>(operands[3]);
  const T* y = static_cast<const T*>(operands[4]);
  auto select = [&](auto remainder) {
    store_block<T, Fold>(n, static_cast<T*>(out), reduced, [&](int64_t i) {
      const T r = remainder(a[i]);
      const T u = x[i], v = y[i];
      if constexpr (kModLeft) {
        return Cmp{}(r, q[i]) ? u : v;
      } else {
        return Cmp{}(q[i], r) ? u : v;
      }
    });
  };
  with_division(s, [&](auto, auto remainder, auto) { select(remainder); });
}

// where(Cmp(a mod s, q), a // s, y) (kQuotientThen; else the quotient is
// the where's y) for integers, Cmp equal or not equal (symmetric), with a
// broadcast divisor s: the quotient and remainder of one division, in the
// where's loop, as their kernels compute them (with_division; per element
// in the members' order, kQuotientFirst, so that a zero divisor raises the
// first one's error before anything is written).
template <class T, class Cmp, bool kQuotientThen, bool kQuotientFirst, class Fold>
void divmod_compare_select(const void* const* operands, int64_t n, void* out, void* reduced,
                           uint32_t) {
  const T* a = static_cast<const T*>(operands[0]);
  const T s = *static_cast<const T*>(operands[1]);
  const T* q = static_cast<const T*>(operands[2]);
  const T* y = static_cast<const T*>(operands[3]);
  auto select = [&](auto quotient, auto remainder, auto) {
    store_block<T, Fold>(n, static_cast<T*>(out), reduced, [&](int64_t i) {
      T d, r;
      if constexpr (kQuotientFirst) {
        d = quotient(a[i]);
        r = remainder(a[i]);
      } else {
        r = remainder(a[i]);
        d = quotient(a[i]);
      }
      const T other = y[i];
      const bool c = Cmp{}(r, q[i]);
      if constexpr (kQuotientThen) {
        return c ? d : other;
      } else {
        return c ? other : d;
      }
    });
  };
  with_division(s, select);
}

// where(Cmp(x, g), where(x mod s == r, x // s, x * t + e), x) for integers,
// g, s, r, t and e broadcast scalars: collatz's step, 9 members in one loop
// that reads x once and keeps the scalars in registers, with the fold of
// the program's max or min when it is the last stage. Cmp is greater, less
// or equal; the flags negate the tests (so every comparison and either
// branch order) and pick the other forms of the addend. Per element the
// members' own arithmetic, so their bits: the product as
// with_scaled_product, the division as with_division, the sum or
// difference with e wrapping as AddOp and SubOp do. A zero divisor raises
// the error of the division member eager execution runs first, before
// anything is written.
template <class T, class Cmp, class Fold>
void guarded_division_step(const void* const* operands, int64_t n, void* out, void* reduced,
                           uint32_t flags) {
  using U = std::make_unsigned_t<T>;
  const T* x = static_cast<const T*>(operands[0]);
  auto scalar = [operands](int k) { return *static_cast<const T*>(operands[k]); };
  const T g = scalar(1), s = scalar(2), r = scalar(3), t = scalar(4), e = scalar(5);
  if (s == 0 && n > 0) {
    if (flags & kQuotientFirst) ops::scalar::FloorDivOp{}(T(0), s);
    ops::scalar::ModOp{}(T(0), s);
  }
  // v - e = v + (-e) and e - v = ~v + (e + 1) in the unsigned type: the
  // addend's three forms are (v ^ flip) + k.
  const U flip = flags & kAddendMinusProduct ? U(-1) : U(0);
  const U k = flags & kAddendMinusProduct   ? U(U(e) + 1)
              : flags & kProductMinusAddend ? U(-U(e))
                                            : U(e);
  // The tests as masks (all ones where true), negated by a flag: so the
  // selects vectorise without widening bools.
  const U guard_flip = flags & kStepWhereGuardFails ? U(-1) : U(0);
  const U quotient_flip = flags & kQuotientWhereUnequal ? U(-1) : U(0);
  auto select = [](U mask, T yes, T no) { return T((U(yes) & mask) | (U(no) & ~mask)); };
  // The flips as arguments: zero constants in the loop that runs without
  // them (collatz's), which then has no instruction for them.
  auto run = [&](auto quotient, auto remainder, auto product, auto product_flip, auto quotient_flip,
                 auto guard_flip) {
    store_block<T, Fold>(n, static_cast<T*>(out), reduced, [&](int64_t i) {
      const T v = x[i];
      const T other = T(U(U(product(v)) ^ U(product_flip)) + k);
      const U quotient_mask = U(-U(remainder(v) == r)) ^ U(quotient_flip);
      const T stepped = select(quotient_mask, quotient(v), other);
      return select(U(-U(Cmp{}(v, g))) ^ U(guard_flip), stepped, v);
    });
  };
  with_division(s, [&](auto quotient, auto remainder, auto vectorises) {
    if constexpr (vectorises) {
      with_scaled_product(t, [&](auto product) {
        if ((flip | quotient_flip | guard_flip) == 0) {
          constexpr std::integral_constant<U, 0> kNone;
          run(quotient, remainder, product, kNone, kNone, kNone);
        } else {
          run(quotient, remainder, product, flip, quotient_flip, guard_flip);
        }
      });
    } else {  // element by element anyway: one loop
      run(
          quotient, remainder, [t](T v) { return ops::scalar::MulOp{}(v, t); }, flip, quotient_flip,
          guard_flip);
    }
  });
}

// Calls then(T{}) for the dtypes composed loops cover; null for bool.
template <class Then>
FusedProgram::ComposedFn with_number(DType dtype, Then then) {
  switch (dtype) {
    case DType::float32:
      return then(float{});
    case DType::float64:
      return then(double{});
    case DType::int32:
      return then(int32_t{});
    case DType::int64:
      return then(int64_t{});
    default:  // bool, and the storage dtypes, which are never fused
      break;
  }
  return nullptr;
}

// Calls then with the functor of add, sub or mul; null for other ops.
template <class Then>
FusedProgram::ComposedFn with_arithmetic(ops::OpId id, Then then) {
  using ops::OpId;
  return ops::with_functor<OpId::Add, OpId::Sub, OpId::Mul>(id, then, FusedProgram::ComposedFn{});
}

// Calls then with the functor of a comparison; null for other ops.
template <class Then>
FusedProgram::ComposedFn with_comparison(ops::OpId id, Then then) {
  using ops::OpId;
  return ops::with_functor<OpId::Equal, OpId::NotEqual, OpId::Less, OpId::LessEqual, OpId::Greater,
                           OpId::GreaterEqual>(id, then, FusedProgram::ComposedFn{});
}

FusedProgram::ComposedFn arithmetic_pair_for(DType dtype, ops::OpId first, ops::OpId second,
                                             SecondForm form, bool sum) {
  return with_number(dtype, [&](auto t) {
    return with_arithmetic(first, [&](auto f) {
      return with_arithmetic(second, [&](auto g) -> FusedProgram::ComposedFn {
        using T = decltype(t);
        using F = decltype(f);
        using G = decltype(g);
        auto pick = [&]<SecondForm kForm>() -> FusedProgram::ComposedFn {
          if constexpr (std::is_floating_point_v<T>) {
            if (sum) return &arithmetic_pair<T, F, G, kForm, true>;
          }
          return &arithmetic_pair<T, F, G, kForm, false>;
        };
        switch (form) {
          case SecondForm::kBoth:
            return pick.template operator()<SecondForm::kBoth>();
          case SecondForm::kLeft:
            return pick.template operator()<SecondForm::kLeft>();
          case SecondForm::kRight:
            break;
        }
        return pick.template operator()<SecondForm::kRight>();
      });
    });
  });
}

// scaled_pair for an integer dtype; null for others.
FusedProgram::ComposedFn scaled_pair_for(DType dtype, ops::OpId second, SecondForm form) {
  return with_number(dtype, [&](auto t) {
    return with_arithmetic(second, [&](auto g) -> FusedProgram::ComposedFn {
      using T = decltype(t);
      using G = decltype(g);
      if constexpr (std::is_integral_v<T>) {
        switch (form) {
          case SecondForm::kBoth:
            return &scaled_pair<T, G, SecondForm::kBoth>;
          case SecondForm::kLeft:
            return &scaled_pair<T, G, SecondForm::kLeft>;
          case SecondForm::kRight:
            break;
        }
        return &scaled_pair<T, G, SecondForm::kRight>;
      }
      return nullptr;
    });
  });
}

// Calls then with the reducer a where stage folds its values with (void:
// none) for `fold` (kCount: none; see store_block).
template <class Then>
FusedProgram::ComposedFn with_fold(ops::OpId fold, Then then) {
  switch (fold) {
    case ops::OpId::ReduceMax:
      return then(ops::scalar::MaximumOp{});
    case ops::OpId::ReduceMin:
      return then(ops::scalar::MinimumOp{});
    default:
      return then(nullptr);
  }
}
template <class F>
using FoldOf = std::conditional_t<std::is_null_pointer_v<F>, void, F>;

FusedProgram::ComposedFn compare_select_for(DType dtype, ops::OpId comparison, ops::OpId fold) {
  return with_number(dtype, [&](auto t) {
    return with_comparison(comparison, [&](auto cmp) -> FusedProgram::ComposedFn {
      using Cmp = decltype(cmp);
      return with_fold(fold, [&](auto f) -> FusedProgram::ComposedFn {
        using T = std::remove_cvref_t<decltype(t)>;
        if constexpr (std::is_integral_v<T> || std::is_null_pointer_v<decltype(f)>) {
          return &compare_select<T, Cmp, FoldOf<decltype(f)>>;
        }
        return nullptr;
      });
    });
  });
}

FusedProgram::ComposedFn divmod_compare_select_for(DType dtype, ops::OpId comparison,
                                                   bool quotient_then, bool quotient_first,
                                                   ops::OpId fold) {
  if (comparison != ops::OpId::Equal && comparison != ops::OpId::NotEqual) return nullptr;
  return with_number(dtype, [&](auto t) {
    return with_comparison(comparison, [&](auto cmp) -> FusedProgram::ComposedFn {
      using Cmp = decltype(cmp);
      return with_fold(fold, [&](auto f) -> FusedProgram::ComposedFn {
        using T = std::remove_cvref_t<decltype(t)>;
        using Fold = FoldOf<decltype(f)>;
        if constexpr (std::is_integral_v<T>) {
          if (quotient_then) {
            return quotient_first ? &divmod_compare_select<T, Cmp, true, true, Fold>
                                  : &divmod_compare_select<T, Cmp, true, false, Fold>;
          }
          return quotient_first ? &divmod_compare_select<T, Cmp, false, true, Fold>
                                : &divmod_compare_select<T, Cmp, false, false, Fold>;
        }
        return nullptr;
      });
    });
  });
}

FusedProgram::ComposedFn guarded_division_step_for(DType dtype, ops::OpId guard, ops::OpId fold) {
  return with_number(dtype, [&](auto t) {
    return with_fold(fold, [&](auto f) -> FusedProgram::ComposedFn {
      using T = std::remove_cvref_t<decltype(t)>;
      using Fold = FoldOf<decltype(f)>;
      if constexpr (std::is_integral_v<T>) {
        switch (guard) {
          case ops::OpId::Greater:
            return &guarded_division_step<T, ops::scalar::GreaterOp, Fold>;
          case ops::OpId::Less:
            return &guarded_division_step<T, ops::scalar::LessOp, Fold>;
          case ops::OpId::Equal:
            return &guarded_division_step<T, ops::scalar::EqualOp, Fold>;
          default:
            break;
        }
      }
      return nullptr;
    });
  });
}

FusedProgram::ComposedFn mod_compare_select_for(DType dtype, ops::OpId comparison, bool mod_left,
                                                ops::OpId fold) {
  return with_number(dtype, [&](auto t) {
    return with_comparison(comparison, [&](auto cmp) -> FusedProgram::ComposedFn {
      using Cmp = decltype(cmp);
      return with_fold(fold, [&](auto f) -> FusedProgram::ComposedFn {
        using T = std::remove_cvref_t<decltype(t)>;
        using Fold = FoldOf<decltype(f)>;
        if constexpr (std::is_integral_v<T>) {
          return mod_left ? &mod_compare_select<T, Cmp, true, Fold>
                          : &mod_compare_select<T, Cmp, false, Fold>;
        }
        return nullptr;
      });
    });
  });
}

}  // namespace

extern const FusedLoops fused_loops = {
    &arithmetic_pair_for,       &scaled_pair_for,           &compare_select_for,
    &divmod_compare_select_for, &guarded_division_step_for, &mod_compare_select_for,
    &sum_block<float>,          &sum_block<double>,
};

}  // namespace ag::exec::AG_ISA_NS
AG_ISA_END
