#!/usr/bin/env python3
"""scripts/test_summary on hand-made ctest JUnit files: the line of CPU paths,
the skip list with reasons, and each way a run must fail.
  python3 tests/scripts/test_summary_test.py   (from the repository root)"""
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "test_summary")


def gtest_out(name, body):
    return (f"Running main() from gtest_main.cc\nNote: Google Test filter = {name}\n"
            f"[ RUN      ] {name}\n{body}")


def passed(name, body=""):
    out = gtest_out(name, body + f"[       OK ] {name} (1 ms)\n")
    return f'<testcase name="{name}" status="run"><system-out>{out}</system-out></testcase>'


def gtest_skipped(name, reason):
    out = gtest_out(name, f"../tests/kernels/x_test.cc:9: Skipped\n{reason}\n[  SKIPPED ] {name} (0 ms)\n")
    return (f'<testcase name="{name}" status="notrun"><skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/>'
            f"<system-out>{out}</system-out></testcase>")


def script_skipped(name, out):
    return (f'<testcase name="{name}" status="notrun"><skipped message="SKIP_RETURN_CODE=77"/>'
            f"<system-out>{out}</system-out></testcase>")


def failed(name):
    return (f'<testcase name="{name}" status="fail"><failure message="Failed"/>'
            f"<system-out>{gtest_out(name, '[  FAILED  ] x')}</system-out></testcase>")


KERNEL_TESTS = [
    passed("Linear.Scalar", "[ CPU PATH ] scalar\n"),
    passed("Linear.Avx2", "[ CPU PATH ] avx2\n"),
    passed("Linear.Avx512", "[ CPU PATH ] avx512\n"),
    gtest_skipped("GemmDpbf16.Bits", "cpu path avx512bf16: not on this CPU"),
    gtest_skipped("Linear.Amx", "cpu path amx: not on this CPU"),
]


class TestSummary(unittest.TestCase):
    def run_summary(self, cases, supported, *extra):
        with tempfile.NamedTemporaryFile("w", suffix=".xml", delete=False) as f:
            f.write('<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="x">' + "".join(cases) + "</testsuite>")
        try:
            r = subprocess.run([sys.executable, SCRIPT, f.name, "--supported", supported, *extra],
                               capture_output=True, text=True)
        finally:
            os.unlink(f.name)
        return r.returncode, r.stdout + r.stderr

    def test_lists_paths_and_skips_with_reasons(self):
        rc, out = self.run_summary(KERNEL_TESTS + [script_skipped("e2e.netns", "SKIP: needs root\n")],
                                   "scalar avx2 avx512", "--require-all")
        self.assertEqual(rc, 0, out)
        self.assertIn("cpu paths exercised: scalar avx2 avx512 "
                      "(avx512bf16: not on this CPU, amx: not on this CPU)", out)
        self.assertIn("GemmDpbf16.Bits: cpu path avx512bf16: not on this CPU", out)
        self.assertIn("e2e.netns: needs root", out)
        self.assertIn("tests: 6 run, 3 passed, 0 failed, 3 skipped", out)

    def test_fails_when_a_supported_path_was_skipped(self):
        rc, out = self.run_summary(KERNEL_TESTS, "scalar avx2 avx512 avx512bf16")
        self.assertEqual(rc, 1, out)
        self.assertIn("FAIL: GemmDpbf16.Bits skipped cpu path avx512bf16, which this CPU supports", out)
        self.assertNotIn("Linear.Amx skipped", out)

    def test_fails_on_a_skip_without_a_reason(self):
        for case in (gtest_skipped("Foo.Bare", ""), script_skipped("e2e.bare", "nothing said\n")):
            rc, out = self.run_summary([case], "scalar")
            self.assertEqual(rc, 1, out)
            self.assertIn("skipped without saying why", out)

    def test_ctest_reasons_count(self):
        cases = ['<testcase name="d" status="disabled"><system-out>Disabled</system-out></testcase>',
                 '<testcase name="f" status="notrun"><skipped message="Fixture dependency failed"/></testcase>']
        rc, out = self.run_summary(cases, "scalar")
        self.assertEqual(rc, 0, out)
        self.assertIn("d: disabled", out)
        self.assertIn("f: Fixture dependency failed", out)

    def test_node_subtest_skips_are_listed(self):
        tap = "TAP version 13\nok 1 - serves # SKIP needs two GPUs\nok 2 - bare # SKIP\n"
        rc, out = self.run_summary([f'<testcase name="e2e.x" status="run"><system-out>{tap}</system-out></testcase>'],
                                   "scalar")
        self.assertEqual(rc, 1, out)
        self.assertIn("e2e.x: serves: needs two GPUs", out)
        self.assertIn("FAIL: e2e.x: bare skipped without saying why", out)

    def test_require_all_fails_when_a_supported_path_went_unexercised(self):
        cases = [passed("Linear.Scalar", "[ CPU PATH ] scalar\n")]
        rc, out = self.run_summary(cases, "scalar avx2")
        self.assertEqual(rc, 0, out)
        self.assertIn("avx2: on this CPU, not exercised", out)
        rc, out = self.run_summary(cases, "scalar avx2", "--require-all")
        self.assertEqual(rc, 1, out)
        self.assertIn("cpu path avx2 is supported by this CPU but no test exercised it", out)

    def test_fails_when_the_tool_and_the_tests_disagree(self):
        rc, out = self.run_summary(KERNEL_TESTS, "scalar avx2")
        self.assertEqual(rc, 1, out)
        self.assertIn("cpu path avx512 was exercised (Linear.Avx512) but cpu_paths says this CPU lacks it", out)

    def test_failed_tests_are_counted_and_their_markers_count(self):
        rc, out = self.run_summary([failed("Linear.Broken"), passed("Linear.Scalar", "[ CPU PATH ] scalar\n")],
                                   "scalar")
        self.assertEqual(rc, 0, out)  # the ctest exit status reports failures; the summary counts them
        self.assertIn("1 failed", out)


if __name__ == "__main__":
    unittest.main()
