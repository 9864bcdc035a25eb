"""What the model sees at a leaf: the projection, token figures, descriptions, the conversation, diffs."""
