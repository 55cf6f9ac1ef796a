"""Tests of the Problems panel."""
