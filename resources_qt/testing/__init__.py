"""Resource tests: expectations declared in the project, run through the real serving path."""

from resources_qt.testing.spec import EXPECTATION_KEYS, Expectation, TestSpec, TestSpecError, parse_tests, test_to_dict

__all__ = ["EXPECTATION_KEYS", "Expectation", "TestSpec", "TestSpecError", "parse_tests", "test_to_dict"]
