// Array's arithmetic, bitwise and comparison operators: each is the jx::np function of its name.
#include "jx/numpy.hpp"

namespace jx {

Array operator+(const Array& a, const Array& b) { return np::add(a, b); }
Array operator-(const Array& a, const Array& b) { return np::subtract(a, b); }
Array operator*(const Array& a, const Array& b) { return np::multiply(a, b); }
// An operator has no caller's location to give (it takes no more parameters).
Array operator/(const Array& a, const Array& b) { return np::true_divide(a, b, {}); }
Array operator%(const Array& a, const Array& b) { return np::remainder(a, b, {}); }
Array operator-(const Array& a) { return np::negative(a); }
Array operator~(const Array& a) { return np::bitwise_not(a); }
Array operator&(const Array& a, const Array& b) { return np::bitwise_and(a, b); }
Array operator|(const Array& a, const Array& b) { return np::bitwise_or(a, b); }
Array operator<(const Array& a, const Array& b) { return np::less(a, b); }
Array operator<=(const Array& a, const Array& b) { return np::less_equal(a, b); }
Array operator>(const Array& a, const Array& b) { return np::greater(a, b); }
Array operator>=(const Array& a, const Array& b) { return np::greater_equal(a, b); }
Array operator==(const Array& a, const Array& b) { return np::equal(a, b); }
Array operator!=(const Array& a, const Array& b) { return np::not_equal(a, b); }

}  // namespace jx
