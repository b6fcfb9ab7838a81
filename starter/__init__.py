"""The starter AI/ files `brain install` copies into a new vault (`brain.starter_data`)."""
