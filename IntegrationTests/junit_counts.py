#!/usr/bin/env python3
"""A JUnit report's counts, on one line: test cases, failed cases, failures, errors (for IntegrationTests/schemathesis).

Schemathesis writes one test case per operation plus one for the stateful suite, and a failure
element per unique failure found there.
"""
import sys
import xml.etree.ElementTree as ET

cases = list(ET.parse(sys.argv[1]).getroot().iter("testcase"))
bad = [c for c in cases if c.find("failure") is not None or c.find("error") is not None]
print(len(cases), len(bad), sum(len(c.findall("failure")) for c in cases), sum(len(c.findall("error")) for c in cases))
