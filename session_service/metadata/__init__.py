"""Session metadata: a user's patch and the model's suggestion."""
