"""Each chapter's checks, in-process on real Spark: the course's answers pass, and each
misconception gets its lesson."""
