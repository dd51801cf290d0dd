"""NumPy and Locus exchange tensors through DLPack without copying.

Run by ctest (interop.numpy_dlpack) with PYTHONPATH at the test-only module locus_dlpack_probe,
whose tensors have __dlpack__ / __dlpack_device__ and whose from_dlpack takes NumPy arrays.
Checks values, shapes, strides, that both sides see one memory, and that every deleter runs
exactly once: Locus's (counted by the module) and NumPy's (its reference to the array).
"""

import gc
import sys
import unittest

import numpy as np

import locus_dlpack_probe as lp

# The dtypes NumPy 1.x takes through DLPack; bool and bfloat16 came later or not at all.
NUMERIC = ["uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]


def address(a):
    return a.__array_interface__["data"][0]


class NumpyConsumesLocus(unittest.TestCase):
    def test_values_shape_strides_and_one_memory(self):
        calls = lp.deleter_calls()
        t = lp.arange(12, "float32").reshape([3, 4])
        self.assertEqual(t.__dlpack_device__(), (1, 0))  # kDLCPU
        a = np.from_dlpack(t)
        self.assertEqual(a.dtype, np.float32)
        self.assertEqual(a.shape, (3, 4))
        self.assertEqual(a.strides, (16, 4))
        np.testing.assert_array_equal(a, np.arange(12, dtype=np.float32).reshape(3, 4))
        self.assertEqual(address(a), t.data_ptr)
        # Written through Locus, read through NumPy: one memory. (NumPy 1.x marks the arrays
        # from_dlpack makes read-only, so the writes come from Locus's side here.)
        t.add_(10)
        np.testing.assert_array_equal(a, np.arange(12).reshape(3, 4) + 10)
        del t
        self.assertEqual(lp.deleter_calls(), calls, "NumPy's array still holds the memory")
        self.assertEqual(float(a.sum()), 66.0 + 120.0)
        del a
        gc.collect()
        self.assertEqual(lp.deleter_calls(), calls + 1, "the deleter runs once, when NumPy lets go")

    def test_every_dtype_numpy_takes(self):
        for name in NUMERIC:
            with self.subTest(dtype=name):
                t = lp.arange(10, name)
                a = np.from_dlpack(t)
                self.assertEqual(a.dtype, np.dtype(name))
                np.testing.assert_array_equal(a, np.arange(10).astype(name))
                self.assertEqual(address(a), t.data_ptr)

    def test_dtypes_numpy_refuses_still_give_the_memory_back(self):
        for name in ["bool", "bfloat16"]:
            with self.subTest(dtype=name):
                calls = lp.deleter_calls()
                t = lp.arange(4, name)
                try:
                    a = np.from_dlpack(t)
                except (RuntimeError, TypeError, BufferError):
                    a = None  # NumPy 1.x has no DLPack bool; no NumPy has bfloat16
                if a is not None:
                    np.testing.assert_array_equal(a, [False, True, False, True])
                    del a
                gc.collect()
                self.assertEqual(lp.deleter_calls(), calls + 1)

    def test_strided_views_and_storage_offsets(self):
        t = lp.arange(60, "int32").reshape([3, 4, 5]).permute([2, 0, 1]).narrow(2, 1, 2)
        self.assertGreater(t.storage_offset, 0)
        a = np.from_dlpack(t)
        ref = np.arange(60, dtype=np.int32).reshape(3, 4, 5).transpose(2, 0, 1)[:, :, 1:3]
        np.testing.assert_array_equal(a, ref)
        self.assertEqual(a.strides, tuple(4 * s for s in t.strides))
        self.assertEqual(address(a), t.data_ptr)

    def test_zero_dim_and_empty(self):
        s = lp.arange(8, "float64").narrow(0, 5, 1).reshape([])
        a = np.from_dlpack(s)
        self.assertEqual(a.shape, ())
        self.assertEqual(float(a), 5.0)
        e = np.from_dlpack(lp.arange(0, "int64").reshape([0, 3]))
        self.assertEqual(e.shape, (0, 3))
        self.assertEqual(e.dtype, np.int64)

    def test_memory_returns_to_its_baseline(self):
        gc.collect()
        base = lp.memory_allocated_cpu()
        t = lp.arange(1 << 20, "float32")
        a = np.from_dlpack(t)
        del t
        self.assertGreaterEqual(lp.memory_allocated_cpu() - base, 4 << 20)
        del a
        gc.collect()
        self.assertEqual(lp.memory_allocated_cpu(), base)

    def test_sim_tensors_are_refused_with_locus_message(self):
        t = lp.arange(4, "float32", device="sim:0")
        with self.assertRaises(ValueError) as caught:
            np.from_dlpack(t)
        self.assertIn("cannot export a tensor on sim:0: DLPack has no device for the simulated accelerator",
                      str(caught.exception))


class LocusConsumesNumpy(unittest.TestCase):
    def test_values_and_one_memory(self):
        a = np.arange(12, dtype=np.float64).reshape(3, 4)
        refs = sys.getrefcount(a)
        t = lp.from_dlpack(a)
        self.assertEqual((t.shape, t.strides, t.dtype), ([3, 4], [4, 1], "float64"))
        self.assertEqual(t.tolist(), a.ravel().tolist())
        self.assertEqual(t.data_ptr, address(a))
        self.assertEqual(sys.getrefcount(a), refs + 1, "NumPy's struct holds the array while Locus uses it")
        t.add_(1)  # written through Locus, read through NumPy
        np.testing.assert_array_equal(a, np.arange(12).reshape(3, 4) + 1)
        a[0, 0] = -5  # and the other way
        self.assertEqual(t.tolist()[0], -5.0)
        del t
        self.assertEqual(sys.getrefcount(a), refs, "NumPy's deleter ran once when the last Locus tensor died")

    def test_every_dtype_and_strided_arrays(self):
        for name in NUMERIC:
            with self.subTest(dtype=name):
                a = np.arange(24).astype(name).reshape(4, 6)[::2, 1::2]
                t = lp.from_dlpack(a)
                self.assertEqual(t.dtype, name)
                self.assertEqual(t.shape, [2, 3])
                self.assertEqual(t.strides, [12, 2])
                self.assertEqual(t.tolist(), a.astype(np.float64).ravel().tolist())
                self.assertEqual(t.data_ptr, address(a))

    def test_a_locus_capsule_round_trips_in_both_struct_kinds(self):
        calls = lp.deleter_calls()
        t = lp.arange(6, "int16")
        for max_version in [None, (1, 1)]:
            with self.subTest(max_version=max_version):
                u = lp.from_dlpack(t.__dlpack__(max_version=max_version))
                self.assertEqual(u.data_ptr, t.data_ptr)
                u.add_(1)
                del u
        self.assertEqual(t.tolist(), [2, 3, 4, 5, 6, 7])
        self.assertEqual(lp.deleter_calls(), calls + 2)

    def test_refused_dtype_leaves_the_capsule_to_give_the_array_back(self):
        a = np.zeros(3, dtype=np.complex64)
        refs = sys.getrefcount(a)
        with self.assertRaises(TypeError) as caught:
            lp.from_dlpack(a)
        self.assertIn("DLPack dtype complex64 (code 5, 64 bits, 1 lane) has no Locus dtype", str(caught.exception))
        del caught
        gc.collect()
        self.assertEqual(sys.getrefcount(a), refs, "the unused capsule called NumPy's deleter")


if __name__ == "__main__":
    unittest.main(verbosity=2)
