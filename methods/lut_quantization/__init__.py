"""The paper's methods for the ``lut-quantization`` task, one module per method (see tasks/lut_quantization/README.md).

Code that the methods and the baselines of this family share goes in
``common/lut_quantization/``, never here: baselines must not import methods.
"""
