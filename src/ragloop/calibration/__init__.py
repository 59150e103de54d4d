"""Fitting the extractive answer's sentence model: on the development corpora's rows
(``bench/calibrate.py``) or on a test set generated from the user's own index
(``ragloop calibrate``, ``corpus``)."""
