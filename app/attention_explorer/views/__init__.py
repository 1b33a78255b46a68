"""The widgets that draw the controller's state: one view per module, none computes attention."""
