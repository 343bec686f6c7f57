"""localization: the JAX library behind the book *Localization in neural receptive fields*.

Importing the package switches JAX to 64-bit mode (``jax_enable_x64``). The theory (the
amplifier, quadratures, closed forms) needs float64 to meet the book's tolerances; simulations
ask for float32 explicitly through their ``dtype`` arguments where speed matters.
"""

import jax

jax.config.update("jax_enable_x64", True)

__version__ = "0.1.0"
