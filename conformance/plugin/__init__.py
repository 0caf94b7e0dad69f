"""The suite's pytest machinery: implementation selection, expectations, results."""
