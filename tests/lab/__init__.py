"""The learner's JupyterLab and the command that starts it."""
